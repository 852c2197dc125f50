import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The envelope of every error the API returns. */
export class ErrorResponse {
  @ApiProperty({ example: 'Not found.' })
  message: string;

  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    example: null,
  })
  details: Record<string, unknown> | null;
}

export class ValidationErrorItemResponse {
  @ApiProperty({
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    example: ['query', 'page_size'],
  })
  loc: (string | number)[];

  @ApiProperty({ example: 'page_size must not be greater than 50' })
  msg: string;

  @ApiProperty({ example: 'max' })
  type: string;
}

export class ValidationErrorDetails {
  @ApiProperty({ type: [ValidationErrorItemResponse] })
  errors: ValidationErrorItemResponse[];
}

export class ValidationErrorResponse {
  @ApiProperty({ example: 'Validation error.' })
  message: string;

  @ApiProperty({ type: ValidationErrorDetails })
  details: ValidationErrorDetails;
}

export class RetryAfterDetails {
  @ApiProperty({ type: 'integer', example: 42, minimum: 1 })
  retry_after: number;
}

export class RateLimitedResponse {
  @ApiProperty({ example: 'Too many requests. Please try again later.' })
  message: string;

  @ApiProperty({ type: RetryAfterDetails })
  details: RetryAfterDetails;
}
