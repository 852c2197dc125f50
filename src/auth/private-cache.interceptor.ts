import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Response } from 'express';
import type { Observable } from 'rxjs';

/**
 * `Cache-Control: private, no-store` on every /auth/* response (decisions §1), also on the public token routes
 * where no Authorization header is sent. Controller-scoped, so it runs after the global cache interceptor.
 */
@Injectable()
export class PrivateNoStoreInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') {
      context
        .switchToHttp()
        .getResponse<Response>()
        .setHeader('Cache-Control', 'private, no-store');
    }
    return next.handle();
  }
}
