import {
  applyDecorators,
  Controller,
  UseFilters,
  UseGuards,
  type CanActivate,
  type ExceptionFilter,
  type Type,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';

/**
 * A controller of HTML pages at `path`: not part of the OpenAPI document, outside the API's JWT guard (`guards`
 * bring the pages' own session check, if any), its errors rendered by `filter` as a page instead of the API's JSON.
 */
export const HtmlPages = (
  path: string,
  filter: Type<ExceptionFilter>,
  ...guards: Type<CanActivate>[]
) =>
  applyDecorators(
    ApiExcludeController(),
    Public(),
    ...(guards.length ? [UseGuards(...guards)] : []),
    UseFilters(filter),
    Controller(path),
  );
