import { Module } from '@nestjs/common';
import { AdminModule } from '../admin/admin.module.js';
import { AppConfig } from '../config/app-config.js';
import { ModerationAuditModule } from '../moderation-audit/moderation-audit.module.js';
import { MapApiClient } from './adapters/map-api.client.js';
import { MapQueryClient } from './adapters/map-query.client.js';
import { MapContributionConsoleController } from './console/map-contribution-console.controller.js';
import { MapContributionController } from './map-contribution.controller.js';
import { ContributionHistoryRepository } from './contribution-history.repository.js';
import { ContributionTransitions } from './contribution-transitions.repository.js';
import { ContributionRecordsService } from './contribution-records.service.js';
import { DuplicateCheckService } from './duplicate-check.service.js';
import { MapContributionRepository } from './map-contribution.repository.js';
import { MAP_API_CLIENT, MAP_QUERY_CLIENT } from './map-contribution.tokens.js';
import { MapWriterService } from './map-writer.service.js';
import { PermissionWithdrawalService } from './permission-withdrawal.service.js';
import { ReconciliationService } from './reconciliation.service.js';
import { WriteGatesService } from './write-gates.service.js';
import { WriteSagaService } from './write-saga.service.js';
import { WriteStateRepository } from './write-state.repository.js';

/**
 * Staff-only map contribution: the JSON API and the staff console's pages. Imported by AppModule alone: no other
 * module may reach it (lint rule `no-restricted-imports` and the before-stop check enforce that).
 */
@Module({
  imports: [AdminModule, ModerationAuditModule],
  controllers: [MapContributionController, MapContributionConsoleController],
  providers: [
    MapContributionRepository,
    ContributionHistoryRepository,
    ContributionTransitions,
    WriteStateRepository,
    WriteGatesService,
    ContributionRecordsService,
    DuplicateCheckService,
    MapWriterService,
    WriteSagaService,
    ReconciliationService,
    PermissionWithdrawalService,
    {
      provide: MAP_QUERY_CLIENT,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        config.mapdb.queryUrl
          ? new MapQueryClient({ url: config.mapdb.queryUrl, userAgent: config.mapdb.userAgent })
          : null,
    },
    {
      provide: MAP_API_CLIENT,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        config.mapdb.apiBaseUrl && config.mapdb.oauthAccessToken
          ? new MapApiClient({
              baseUrl: config.mapdb.apiBaseUrl,
              token: config.mapdb.oauthAccessToken,
              userAgent: config.mapdb.userAgent,
            })
          : null,
    },
  ],
})
export class MapContributionModule {}
