import { ApiProperty } from '@nestjs/swagger';

export class HealthResponse {
  @ApiProperty({ example: 'ok' })
  status: 'ok';

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', enum: ['up', 'down', 'degraded'] },
    example: { database: 'up', redis: 'up' },
    description:
      'Each dependency: `up`, `down`, or (Redis only) `degraded`: failing, its fallbacks in use.',
  })
  checks: Record<string, string>;
}
