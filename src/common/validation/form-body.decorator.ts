import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { BODY_OR_FORM, FORM_BODY, FROM_FORM } from './validation.pipe.js';

const formFields = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    context.switchToHttp().getRequest<{ body?: unknown }>().body ?? {},
);

/** The text fields of a multipart form, validated like a JSON body but reported under `form` in 422s. */
export const FormBody = () => formFields(FORM_BODY);

const bodyOrFormFields = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const request = context
    .switchToHttp()
    .getRequest<{ body?: unknown; headers: Record<string, unknown> }>();
  const body = request.body ?? {};
  const contentType = request.headers['content-type'];
  if (typeof contentType === 'string' && contentType.toLowerCase().startsWith('multipart/'))
    Object.defineProperty(body, FROM_FORM, { value: true, enumerable: false });
  return body;
});

/** A body sent either as JSON (422s under `body`) or as a multipart form (422s under `form`). */
export const BodyOrForm = () => bodyOrFormFields(BODY_OR_FORM);
