import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type Type,
  mixin,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import multer from 'multer';
import { catchError, finalize, mergeMap, type Observable } from 'rxjs';
import { ApiError, RequestValidationError } from '../errors/api-error.js';
import { inspectBody } from '../http/input-text.js';
import { FORM_BODY } from '../validation/validation.pipe.js';

export interface PhotoUploadOptions {
  /** The multipart field holding the file. */
  field: string;
  maxBytes: number;
  /** 413 message, e.g. `Photo must be 8MB or smaller.` */
  tooLargeMessage: string;
}

/** Room for the other form fields and the multipart framing on top of the file itself. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/** Where uploads wait while their request is handled; every file is removed when the request ends. */
export const UPLOAD_TEMP_DIR = join(tmpdir(), 'bookcase-uploads');
/** Temporary files are named `<pid>-<uuid>`: processes sharing the directory never touch each other's files. */
const TEMP_PREFIX = `${process.pid}-`;

/** This process's temporary uploads still on disk (what tests check is empty after a request). */
export async function pendingUploadFiles(): Promise<string[]> {
  const names = await readdir(UPLOAD_TEMP_DIR).catch(() => [] as string[]);
  return names.filter((name) => name.startsWith(TEMP_PREFIX));
}

const logger = new Logger('PhotoUpload');

/**
 * Parses a multipart form with at most one file in `field`, streamed to a temporary file (`file.path`) rather than
 * held in memory: ten concurrent 12 MP uploads would otherwise keep 35 MB of bodies (plus their chunk copies) in the
 * heap until the next full GC (issue 7). The size is enforced while the bytes stream in (multer stops at
 * maxBytes + 1 and removes the partial file, as it does when the client aborts), and a declared Content-Length that
 * cannot fit is refused before reading. The file is removed once the handler has finished, whatever its outcome.
 */
export function PhotoUpload(options: PhotoUploadOptions): Type<NestInterceptor> {
  const upload = multer({
    storage: multer.diskStorage({
      // Created on demand: a temporary directory may be cleaned while the process runs.
      destination: (_request, _file, callback) => {
        mkdir(UPLOAD_TEMP_DIR, { recursive: true }).then(
          () => callback(null, UPLOAD_TEMP_DIR),
          (error: Error) => callback(error, UPLOAD_TEMP_DIR),
        );
      },
      filename: (_request, _file, callback) => callback(null, `${TEMP_PREFIX}${randomUUID()}`),
    }),
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
      const path = request.file?.path;
      // Busboy decodes a field that is not UTF-8 with U+FFFD in place of its bytes: refused like NUL bytes.
      const badFields = inspectBody(request.body, FORM_BODY, true);
      if (!path) {
        if (badFields.items.length) throw new RequestValidationError(badFields.items);
        return next.handle();
      }
      let removal: Promise<void> | undefined;
      const remove = () =>
        (removal ??= rm(path, { force: true }).catch((error: Error) =>
          logger.warn(`could not remove upload ${path}: ${error.message}`),
        ));
      // Removed before the answer is sent, whatever it is (validation failures included); 'close' and finalize
      // also cover a request that ends without the handler's observable ever emitting.
      response.once('close', () => void remove());
      try {
        if (badFields.items.length) throw new RequestValidationError(badFields.items);
        return next.handle().pipe(
          mergeMap(async (value: unknown) => {
            await remove();
            return value;
          }),
          catchError(async (error: unknown) => {
            await remove();
            throw error;
          }),
          finalize(() => void remove()),
        );
      } catch (error) {
        await remove();
        throw error;
      }
    }
  }

  function translate(error: unknown): Error {
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

/** The photo of a library submission, a staff edit or a community photo (8 MB). */
export const SUBMISSION_PHOTO_UPLOAD = PhotoUpload({
  field: 'photo',
  maxBytes: 8 * 1024 * 1024,
  tooLargeMessage: 'Photo must be 8MB or smaller.',
});
