import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { FORM_BODY } from './validation.pipe.js';

const formFields = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    context.switchToHttp().getRequest<{ body?: unknown }>().body ?? {},
);

/** The text fields of a multipart form, validated like a JSON body but reported under `form` in 422s. */
export const FormBody = () => formFields(FORM_BODY);
