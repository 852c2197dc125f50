import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PaginationMeta, PaginationQueryDto } from '../../common/pagination/pagination.js';
import { OptionalText } from '../../common/validation/text-rules.js';

/** Every kind of staff decision the moderation audit trail records. */
export const AUDIT_KINDS = [
  'library_approved',
  'library_rejected',
  'library_returned_to_pending',
  'library_edited',
  'staged_edit_applied',
  'staged_edit_rejected',
  'photo_approved',
  'photo_rejected',
  'photo_returned_to_pending',
  'report_resolved',
  'report_dismissed',
  'report_reopened',
  'staff_created',
  'staff_promoted',
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export class AuditQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: AUDIT_KINDS, description: 'Only decisions of this kind' })
  @IsOptional()
  @IsIn(AUDIT_KINDS)
  kind?: AuditKind;

  @ApiPropertyOptional({
    maxLength: 150,
    description: 'Only decisions taken by the staff member with this username (case-insensitive)',
  })
  @OptionalText(150)
  actor?: string;

  @ApiPropertyOptional({
    maxLength: 255,
    description: 'Only decisions about the library with this slug',
  })
  @OptionalText(255)
  library?: string;
}

export class AuditActorResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  @ApiProperty()
  username: string;
}

export class AuditLibraryResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  @ApiProperty()
  slug: string;
  @ApiProperty()
  name: string;
  @ApiProperty()
  address: string;
  @ApiProperty()
  city: string;
  @ApiProperty()
  country: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected'] })
  status: string;
}

export class AuditEventResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  @ApiProperty({ enum: AUDIT_KINDS })
  kind: string;
  @ApiProperty({
    allOf: [{ $ref: getSchemaPath(AuditActorResponse) }],
    nullable: true,
    description: 'The staff member who decided; null for the command line',
  })
  actor: AuditActorResponse | null;
  @ApiProperty({
    allOf: [{ $ref: getSchemaPath(AuditLibraryResponse) }],
    nullable: true,
    description: 'The library concerned; null for account events or once the library is gone',
  })
  library: AuditLibraryResponse | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'What was decided: `from`/`to` statuses and `reason` for status changes, `changes: {field: {before, after}}` for edits, the photo, report or user concerned',
  })
  details: Record<string, unknown>;
  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds' })
  created_at: string;
}

export class AuditEventPageResponse {
  @ApiProperty({ type: [AuditEventResponse] })
  items: AuditEventResponse[];
  @ApiProperty({ type: PaginationMeta })
  pagination: PaginationMeta;
}
