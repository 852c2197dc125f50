import { ApiProperty } from '@nestjs/swagger';
/** One item of the ceiling route's fixed list: roughly the size of a library list item. */
export class CeilingItemResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  slug: string;
  name: string;
  description: string;
  address: string;
  city: string;
  country: string;
  postal_code: string;
  latitude: number;
  longitude: number;
  created_at: string;
}
