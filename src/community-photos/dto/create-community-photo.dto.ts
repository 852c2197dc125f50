import { ApiProperty } from '@nestjs/swagger';
import { OptionalText } from '../../common/validation/text-rules.js';

export class CreateCommunityPhotoDto {
  /** Optional, at most 200 characters. */
  @OptionalText(200)
  caption?: string;
}

export class CreateCommunityPhotoForm extends CreateCommunityPhotoDto {
  @ApiProperty({ type: 'string', format: 'binary', description: 'JPEG, PNG or WEBP, max 8 MB' })
  photo: unknown;
}

export class CommunityPhotoResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  caption: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected'] })
  status: string;
  created_at: string;
}
