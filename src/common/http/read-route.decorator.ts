import { applyDecorators, Get, type Type } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { RateLimit } from '../rate-limit/rate-limit.decorator.js';

/** A GET route in the `read` rate tier whose 200 answers `type`. */
export const ReadRoute = (type: Type, path?: string) =>
  applyDecorators(Get(path), RateLimit('read'), ApiOkResponse({ type }));
