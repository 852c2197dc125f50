import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type Type,
  mixin,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import multer from 'multer';
import type { Observable } from 'rxjs';
import { ApiError, RequestValidationError } from '../errors/api-error.js';

export interface PhotoUploadOptions {
  /** The multipart field holding the file. */
  field: string;
  maxBytes: number;
  /** 413 message, e.g. `Photo must be 8MB or smaller.` */
  tooLargeMessage: string;
}

/** Room for the other form fields and the multipart framing on top of the file itself. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/**
 * Parses a multipart form with at most one file in `field`, held in memory. The size is enforced while the bytes
 * stream in (multer stops at maxBytes + 1), and a declared Content-Length that cannot fit is refused before reading.
 */
export function PhotoUpload(options: PhotoUploadOptions): Type<NestInterceptor> {
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: options.maxBytes, files: 1, fields: 40, fieldSize: 16 * 1024, parts: 50 },
  }).single(options.field);

  @Injectable()
  class PhotoUploadInterceptor implements NestInterceptor {
    async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
      const http = context.switchToHttp();
      const request = http.getRequest<Request>();
      const response = http.getResponse<Response>();
      const declared = Number(request.headers['content-length'] ?? 0);
      if (declared > options.maxBytes + FORM_OVERHEAD_BYTES) {
        request.resume();
        throw new ApiError(413, options.tooLargeMessage);
      }
      await new Promise<void>((resolve, reject) => {
        upload(request, response, (error: unknown) =>
          error ? reject(translate(error)) : resolve(),
        );
      });
      return next.handle();
    }
  }

  function translate(error: unknown): unknown {
    if (error instanceof multer.MulterError) {
      switch (error.code) {
        case 'LIMIT_FILE_SIZE':
          return new ApiError(413, options.tooLargeMessage);
        case 'LIMIT_UNEXPECTED_FILE':
        case 'LIMIT_FILE_COUNT':
          return RequestValidationError.single(
            ['file', error.field ?? options.field],
            'Unexpected file field.',
            'unexpected_file',
          );
        case 'LIMIT_FIELD_VALUE':
        case 'LIMIT_FIELD_KEY':
          return RequestValidationError.single(
            ['form', error.field ?? ''],
            'Field value too long.',
            'too_long',
          );
        default:
          return new ApiError(413, 'Request body too large.');
      }
    }
    return ApiError.badRequest('Cannot parse request body.');
  }

  return mixin(PhotoUploadInterceptor);
}
