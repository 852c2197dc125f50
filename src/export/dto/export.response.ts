import { ApiProperty } from '@nestjs/swagger';
import { RetryAfterDetails } from '../../common/errors/error.response.js';

export class ExportFileResponse {
  @ApiProperty({ example: 'libraries-20260615T120000Z.geojson' })
  name: string;

  @ApiProperty({ type: 'integer', minimum: 0, example: 5_242_880 })
  bytes: number;

  @ApiProperty({
    description: 'Hex SHA-256 of the exact bytes served.',
    pattern: '^[0-9a-f]{64}$',
  })
  sha256: string;
}

export class ExportFilesResponse {
  @ApiProperty({ type: ExportFileResponse })
  geojson: ExportFileResponse;

  @ApiProperty({ type: ExportFileResponse })
  geojson_gz: ExportFileResponse;
}

export class ExportLicenceResponse {
  @ApiProperty({ example: 'ODbL-1.0' })
  id: string;

  @ApiProperty({ example: 'Open Data Commons Open Database License (ODbL) 1.0' })
  name: string;

  @ApiProperty({ example: 'https://opendatacommons.org/licenses/odbl/1-0/' })
  url: string;

  @ApiProperty({ example: 'Bookcase Directory contributors and OpenStreetMap contributors' })
  attribution: string;
}

/** metadata.json of an export version. */
export class ExportMetadataResponse {
  @ApiProperty({ type: 'integer', example: 1 })
  schema_version: number;

  @ApiProperty({ format: 'date-time', example: '2026-06-15T12:00:00.000Z' })
  generated_at: string;

  @ApiProperty({ type: 'integer', minimum: 0, example: 12345 })
  record_count: number;

  @ApiProperty({ description: 'What the files hold and how they are laid out.' })
  format: string;

  @ApiProperty({ type: ExportFilesResponse })
  files: ExportFilesResponse;

  @ApiProperty({ type: ExportLicenceResponse })
  licence: ExportLicenceResponse;

  @ApiProperty({ description: 'Photos are linked, not licensed under the ODbL.' })
  photo_rights: string;

  @ApiProperty({
    description: 'A description of every feature property, by name.',
    type: 'object',
    additionalProperties: { type: 'string' },
  })
  fields: Record<string, string>;
}

/** 503 while no export has been published yet. */
export class ExportUnavailableResponse {
  @ApiProperty({ example: 'The open-data export is not available yet. Please try again later.' })
  message: string;

  @ApiProperty({ type: RetryAfterDetails })
  details: RetryAfterDetails;
}
