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

/** Lookups of the list's memo of one kind (`count`: a list's total, `page`: the ids of a ranked page) since start. */
export class MemoKindResponse {
  kind: string;
  /** Answered from the memo. */
  @ApiProperty({ type: 'integer' })
  hits: number;
  /** Joined a concurrent request's running query. */
  @ApiProperty({ type: 'integer' })
  shared: number;
  /** Computed (and kept only when large). */
  @ApiProperty({ type: 'integer' })
  misses: number;
}

export class MemoStatsResponse {
  @ApiProperty({ type: [MemoKindResponse] })
  items: MemoKindResponse[];
}

/** A read as PostgreSQL received it: the text, its parameters in text form, and whether it was prepared. */
export class CapturedStatementResponse {
  text: string;
  @ApiProperty({ type: 'array', items: { type: 'string', nullable: true } })
  params: (string | null)[];
  prepared: boolean;
}

export class CapturedStatementsResponse {
  @ApiProperty({ type: [CapturedStatementResponse] })
  items: CapturedStatementResponse[];
}
