import { Global, Module } from '@nestjs/common';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import { IdempotencyService } from './idempotency.service.js';

/** Idempotency keys of the photo-carrying creates, and the sweep of expired ones. */
@Global()
@Module({
  providers: [IdempotencyKeysRepository, IdempotencyService],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
