import {
  applyDecorators,
  Body,
  Controller,
  HttpCode,
  Param,
  Post,
  Query,
  type Type,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorResponse } from '../common/errors/error.response.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser, StaffOnly } from '../common/auth/auth.decorators.js';
import type { Page } from '../common/pagination/pagination.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import {
  BatchConfirmDto,
  BlockedResponse,
  BatchConfirmResponse,
  ConfirmDto,
  ContributionListQueryDto,
  ContributionPageResponse,
  ContributionRecordResponse,
  PreviewResponse,
  ResolveDto,
  VerifiedQueryDto,
  verifiedValues,
} from './dto/map-contribution.dto.js';
import { ContributionRecordsService } from './contribution-records.service.js';
import { DuplicateCheckService } from './duplicate-check.service.js';
import { PermissionWithdrawalService } from './permission-withdrawal.service.js';
import { ReconciliationService } from './reconciliation.service.js';
import { WriteSagaService } from './write-saga.service.js';
import { ReadRoute } from '../common/http/read-route.decorator.js';

const actorOf = (user: AuthUser) => ({ id: user.id, username: user.username });

/** A 409 with `details.blockers` when the action is refused now. */
const ApiRefusal = () =>
  ApiConflictResponse({
    type: BlockedResponse,
    description: 'Refused now; details.blockers says why.',
  });

/** A staff write action: `ok` as the 200's body, or refused (409). @HttpCode stays beside it for the OpenAPI plugin. */
const StaffAction = (ok: Type) =>
  applyDecorators(RateLimit('write'), ApiOkResponse({ type: ok }), ApiRefusal());

/** Staff-only map contribution actions (decisions §6). Every write is a deliberate, confirmed staff action. */
@ApiTags('map contribution (staff)')
@StaffOnly()
@Controller('admin/map-contributions')
export class MapContributionController {
  constructor(
    private readonly records: ContributionRecordsService,
    private readonly checks: DuplicateCheckService,
    private readonly saga: WriteSagaService,
    private readonly reconciliation: ReconciliationService,
    private readonly withdrawal: PermissionWithdrawalService,
  ) {}

  /** Contribution records, filtered by state and eligibility. */
  @ReadRoute(ContributionPageResponse)
  list(@Query() query: ContributionListQueryDto): Promise<Page<ContributionRecordResponse>> {
    return this.records.list(query);
  }

  /** One record with every failing eligibility condition and its audit history. */
  @ReadRoute(ContributionRecordResponse, ':slug')
  detail(@Param('slug') slug: string): Promise<ContributionRecordResponse> {
    return this.records.detail(slug);
  }

  /** Run the duplicate check against current map data (read-only). */
  @Post(':slug/check')
  @HttpCode(200)
  @StaffAction(ContributionRecordResponse)
  check(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
  ): Promise<ContributionRecordResponse> {
    return this.checks.check(slug, actorOf(user));
  }

  /** Record the resolution of a possible duplicate. */
  @Post(':slug/resolve')
  @HttpCode(200)
  @StaffAction(ContributionRecordResponse)
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'element_type/element_id missing for same_feature, or not among the candidates.',
  })
  resolve(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
    @Body() body: ResolveDto,
  ): Promise<ContributionRecordResponse> {
    return this.checks.resolve(slug, actorOf(user), body);
  }

  /** The exact node and changeset tags a confirm would send with the same verification flags. */
  @ReadRoute(PreviewResponse, ':slug/preview')
  @ApiRefusal()
  preview(@Param('slug') slug: string, @Query() query: VerifiedQueryDto): Promise<PreviewResponse> {
    return this.records.preview(slug, verifiedValues(query));
  }

  /** The confirmed write (behind the kill switch). Refusals are 409 with details.blockers. */
  @Post(':slug/confirm')
  @HttpCode(200)
  @StaffAction(ContributionRecordResponse)
  confirm(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
    @Body() body: ConfirmDto,
  ): Promise<ContributionRecordResponse> {
    return this.saga.confirm(slug, actorOf(user), verifiedValues(body));
  }

  /**
   * The confirmed write of several reviewed libraries: grouped by small area (one city of one country), one
   * changeset per group. Libraries that are not eligible are left out and reported with their blockers; with writes
   * disabled the whole request is 409 with details.blockers and nothing is sent.
   */
  @Post('batch-confirm')
  @HttpCode(200)
  @StaffAction(BatchConfirmResponse)
  batchConfirm(
    @CurrentUser() user: AuthUser,
    @Body() body: BatchConfirmDto,
  ): Promise<BatchConfirmResponse> {
    return this.saga.batchConfirm(body.slugs, actorOf(user), {
      name: body.verified?.name ?? false,
      brand: body.verified?.brand ?? false,
      operator: body.verified?.operator ?? false,
      website: body.verified?.website ?? false,
    });
  }

  /** After a failed or ambiguous write: read the recorded changeset and link what it holds. Creates nothing. */
  @Post(':slug/reconcile')
  @HttpCode(200)
  @StaffAction(ContributionRecordResponse)
  reconcile(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
  ): Promise<ContributionRecordResponse> {
    return this.reconciliation.reconcile(slug, actorOf(user));
  }

  /** Withdraw the submitter's permission (true → false only). */
  @Post(':slug/withdraw')
  @HttpCode(200)
  @StaffAction(ContributionRecordResponse)
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'The permission is already withdrawn.',
  })
  withdraw(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
  ): Promise<ContributionRecordResponse> {
    return this.withdrawal.withdraw(slug, actorOf(user));
  }
}
