import { Controller, Get, Req, Res } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../common/auth/public.decorator.js';
import { PublicCache } from '../common/http/cache-control.js';
import { sendStoredFile } from '../common/http/send-stored-file.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { ExportMetadataResponse, ExportUnavailableResponse } from './dto/export.response.js';
import { ExportService } from './export.service.js';

const FILE_HEADERS = {
  ETag: {
    description: 'Strong validator: the quoted hex SHA-256 of the body.',
    schema: { type: 'string' },
  },
  'Last-Modified': { description: 'When this version was generated.', schema: { type: 'string' } },
  'Content-Length': { description: 'Size of the body in bytes.', schema: { type: 'integer' } },
  'Content-Disposition': {
    description: 'attachment; filename="libraries-<timestamp>…" (the versioned file name).',
    schema: { type: 'string' },
  },
  'Cache-Control': { description: 'public, max-age=300', schema: { type: 'string' } },
};

const CONDITIONAL =
  'Conditional requests: `If-None-Match` with the ETag (it takes precedence) or `If-Modified-Since` with ' +
  'Last-Modified give 304 while this is still the current version. Own rate-limit tier `export`.';

const NOT_MODIFIED = {
  status: 304,
  description:
    'Not modified: If-None-Match or If-Modified-Since matches the current version. No body.',
  headers: { ETag: FILE_HEADERS.ETag, 'Last-Modified': FILE_HEADERS['Last-Modified'] },
};

const UNAVAILABLE = {
  status: 503,
  description:
    'No export has been generated yet; Retry-After (and details.retry_after) in seconds.',
  headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
  content: { 'application/json': { schema: { $ref: getSchemaPath(ExportUnavailableResponse) } } },
};

const FEATURE_COLLECTION = {
  type: 'object',
  description:
    'A GeoJSON (RFC 7946) FeatureCollection of Point features, one per approved library.',
  required: ['type', 'features'],
  properties: {
    type: { type: 'string', enum: ['FeatureCollection'] },
    licence: { type: 'string', example: 'ODbL-1.0' },
    attribution: { type: 'string' },
    features: { type: 'array', items: { type: 'object', additionalProperties: true } },
  },
};

/**
 * The open-data export (ODbL): the current version's GeoJSON, its gzip and its metadata, with conditional requests.
 * Its own rate-limit tier (`export`); registered before /libraries/{slug}.
 */
@ApiTags('open data')
@ApiExtraModels(ExportMetadataResponse, ExportUnavailableResponse)
@Controller('libraries/export')
export class ExportController {
  constructor(private readonly exports: ExportService) {}

  @Get('latest.geojson')
  @Public()
  @RateLimit('export')
  @PublicCache(300)
  @ApiOperation({ summary: 'The current export as GeoJSON (ODbL 1.0)', description: CONDITIONAL })
  @ApiProduces('application/geo+json')
  @ApiResponse({
    status: 200,
    description: 'The GeoJSON file.',
    headers: FILE_HEADERS,
    content: { 'application/geo+json': { schema: FEATURE_COLLECTION } },
  })
  @ApiResponse(NOT_MODIFIED)
  @ApiResponse(UNAVAILABLE)
  async geojson(@Req() req: Request, @Res() res: Response): Promise<void> {
    await sendStoredFile(req, res, await this.exports.currentFile('geojson'));
  }

  @Get('latest.geojson.gz')
  @Public()
  @RateLimit('export')
  @PublicCache(300)
  @ApiOperation({
    summary:
      'The current export as gzip-compressed GeoJSON (application/gzip, no Content-Encoding)',
    description: CONDITIONAL,
  })
  @ApiProduces('application/gzip')
  @ApiResponse({
    status: 200,
    description: 'The gzip file of the GeoJSON.',
    headers: FILE_HEADERS,
    content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiResponse(NOT_MODIFIED)
  @ApiResponse(UNAVAILABLE)
  async geojsonGz(@Req() req: Request, @Res() res: Response): Promise<void> {
    await sendStoredFile(req, res, await this.exports.currentFile('geojson_gz'));
  }

  @Get('metadata.json')
  @Public()
  @RateLimit('export')
  @PublicCache(300)
  @ApiOperation({
    summary: "The current export's metadata: checksums, licence, field descriptions",
    description: CONDITIONAL,
  })
  @ApiResponse({
    status: 200,
    description: 'metadata.json of the current version.',
    headers: FILE_HEADERS,
    content: { 'application/json': { schema: { $ref: getSchemaPath(ExportMetadataResponse) } } },
  })
  @ApiResponse(NOT_MODIFIED)
  @ApiResponse(UNAVAILABLE)
  async metadata(@Req() req: Request, @Res() res: Response): Promise<void> {
    await sendStoredFile(req, res, await this.exports.currentFile('metadata'));
  }
}
