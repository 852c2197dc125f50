import { Injectable } from '@nestjs/common';
import type { Transaction } from '../database/database.js';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { EnrichmentRepository } from './enrichment.repository.js';

/** Where the library create flow asks for AI enrichment. */
@Injectable()
export class EnrichmentQueue {
  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly jobs: EnrichmentRepository,
  ) {}

  /**
   * Queues enrichment of a library inside the caller's transaction, so the job exists exactly when the library
   * does. Does nothing (and says so) when AI is not configured.
   */
  async enqueue(tx: Transaction, libraryId: number): Promise<boolean> {
    if (!this.config.ai) return false;
    await this.jobs.insertQueued(tx, libraryId, this.clock.date());
    return true;
  }
}
