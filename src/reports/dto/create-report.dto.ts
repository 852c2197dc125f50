import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { Trim } from '../../common/validation/transforms.js';
import { OptionalText } from '../../common/validation/text-rules.js';

export const REPORT_REASONS = [
  'damaged',
  'missing',
  'incorrect_info',
  'inappropriate',
  'other',
] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];

/** Text fields of POST /libraries/{slug}/report (multipart/form-data; optional file `photo`, max 5 MB). */
export class CreateReportDto {
  @ApiProperty({ enum: REPORT_REASONS })
  @Trim()
  @IsIn(REPORT_REASONS)
  reason: ReportReason;

  @OptionalText(2000)
  details?: string;
}

export class CreateReportForm extends CreateReportDto {
  @ApiPropertyOptional({
    type: 'string',
    format: 'binary',
    description: 'JPEG, PNG or WEBP, max 5 MB',
  })
  photo?: unknown;
}
