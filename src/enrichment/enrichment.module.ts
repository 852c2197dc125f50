import { Module } from '@nestjs/common';
import { AiChatClient } from './ai-chat.client.js';
import { DEFAULT_ENRICHMENT_OPTIONS, ENRICHMENT_OPTIONS } from './enrichment.options.js';
import { EnrichmentQueue } from './enrichment.queue.js';
import { EnrichmentRepository } from './enrichment.repository.js';
import { EnrichmentWorker } from './enrichment.worker.js';

/** AI enrichment of blank names and descriptions. Independent of map contribution by design (and by lint rule). */
@Module({
  providers: [
    { provide: ENRICHMENT_OPTIONS, useValue: DEFAULT_ENRICHMENT_OPTIONS },
    EnrichmentRepository,
    AiChatClient,
    EnrichmentQueue,
    EnrichmentWorker,
  ],
  exports: [EnrichmentQueue, EnrichmentWorker],
})
export class EnrichmentModule {}
