import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource, QueryFailedError } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import {
  FAST_TIMESTAMP_TYPES,
  ISO_TIMESTAMP_TYPES,
  type TypeParser,
  type TypeParsers,
} from './timestamp-parser.js';

/** The columns a prepared statement returns, with their parsers and an empty row (every column null, in order). */
interface RowShape {
  fields: pg.FieldDef[];
  /** The type parsers `parsers` come from. */
  types: TypeParsers;
  parsers: TypeParser[];
  empty: Record<string, unknown>;
}

/** A statement's name digest and, once it has returned rows, their shape. */
export interface StatementInfo {
  digest: string;
  shape: RowShape | null;
  /**
   * Per parameter (index 0 is `$1`), the element type OID of a number array sent in binary (binaryArrayTypes), or
   * 0. Computed at the statement's first read; absent until then, and in StatementInfos made elsewhere.
   */
  arrayTypes?: number[];
}

/** The parts of pg's Query (internal, untyped) a PreparedRead sets or reads. */
interface QueryInternals {
  name: string;
  types: TypeParsers;
  _canceledDueToError: Error | false;
  _result: { fields: pg.FieldDef[]; rows: unknown[] };
}

/** The parts of pg's Connection (internal, untyped) a generic PreparedRead writes to. */
interface ConnectionInternals {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(message: { text: string; name: string; types: number[] }): void;
  bind(message: { statement: string; portal: string; values: unknown[] }): void;
  execute(message: { portal: string; rows: number }): void;
}

/** pg's own Query methods a PreparedRead extends (internal, untyped). */
const queryMethods = pg.Query.prototype as unknown as {
  prepare(this: pg.Query, connection: ConnectionInternals): void;
  handleCommandComplete(this: pg.Query, message: unknown, connection: unknown): void;
};

/**
 * What a `generic` read sends before its statement, in the same round trip: PostgreSQL's plan_cache_mode for the
 * rest of the implicit transaction, which ends at the read's Sync (so the next statement on the connection, prepared
 * or not, plans as before, and so does this one if it fails). set_config, not SET LOCAL, which warns outside a
 * transaction block.
 */
const GENERIC_PLAN_TEXT = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`;

function sameFields(a: pg.FieldDef[], b: pg.FieldDef[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (
      a[i].name !== b[i].name ||
      a[i].dataTypeID !== b[i].dataTypeID ||
      a[i].format !== b[i].format
    )
      return false;
  }
  return true;
}

function rowShape(fields: pg.FieldDef[], types: TypeParsers): RowShape {
  // Built in one step: an object given more than 16 properties one keyed store at a time (`empty[name] = null`, as
  // pg's Result does) falls into V8's dictionary mode, and every row spread from it was built through the slow
  // path (24 columns: about 6 µs per row against 0.6; issue 22). Same keys, same order (a repeated name keeps its
  // first place).
  const empty: Record<string, unknown> = Object.fromEntries(
    fields.map((field) => [field.name, null]),
  );
  return {
    fields,
    types,
    parsers: fields.map((field) =>
      types.getTypeParser(field.dataTypeID, field.format === 'binary' ? 'binary' : 'text'),
    ),
    empty,
  };
}

/**
 * One execution of a named statement: pg's own Query (parse once per connection, bind, describe, execute, sync;
 * its errors, timeouts and row-parse failures handled by pg), built from the statement's text so pg does not copy a
 * config object's property descriptors, and answering through a callback rather than pg's promise. A result's
 * column list (RowDescription) is the same at every execution of a statement, so its parsers and its empty row are
 * built once per statement text (pg rebuilds both for every result) and reused while PostgreSQL describes the same
 * columns; each row is then that empty row copied and filled, as pg's Result.parseRow does.
 */
export class PreparedRead extends pg.Query {
  private shape: RowShape | null = null;
  /** Whether the answer of GENERIC_PLAN_TEXT (a row and its completion) is still to come. */
  private settingPlan: boolean;

  /**
   * `genericPlan` (for a statement whose plan is the same whatever its values): the name GENERIC_PLAN_TEXT is
   * prepared under on the connection; PostgreSQL then runs the statement on its generic plan from its first execution
   * on a connection (plan_cache_mode = force_generic_plan for this statement only), instead of planning it with the
   * values at each of its first five executions (custom plans: 1–5 ms each for a place list at 1M).
   */
  constructor(
    name: string,
    text: string,
    values: unknown[],
    private readonly statement: StatementInfo,
    callback: (error: Error | undefined, result: { rows: unknown[] }) => void,
    private readonly genericPlan: string | null = null,
    private readonly typeParsers: TypeParsers = FAST_TIMESTAMP_TYPES,
  ) {
    super(text, values, callback);
    const self = this as unknown as QueryInternals;
    self.name = name;
    self.types = typeParsers;
    this.settingPlan = genericPlan !== null;
  }

  /**
   * pg's extended-protocol messages of the statement (parse once per connection, bind, describe, execute, sync),
   * preceded for a generic read by GENERIC_PLAN_TEXT's bind and execute (parsed once per connection), all sent
   * together.
   */
  prepare(connection: ConnectionInternals): void {
    const name = this.genericPlan;
    if (name !== null) {
      if (
        connection.parsedStatements[name] === undefined &&
        connection.submittedNamedStatements[name] === undefined
      ) {
        connection.parse({ text: GENERIC_PLAN_TEXT, name, types: [] });
        connection.submittedNamedStatements[name] = GENERIC_PLAN_TEXT;
      }
      connection.bind({ statement: name, portal: '', values: [] });
      connection.execute({ portal: '', rows: 0 });
    }
    queryMethods.prepare.call(this, connection);
  }

  handleCommandComplete(message: unknown, connection: unknown): void {
    if (this.settingPlan) {
      this.settingPlan = false;
      return;
    }
    queryMethods.handleCommandComplete.call(this, message, connection);
  }

  handleRowDescription(message: { fields: pg.FieldDef[] }): void {
    const known = this.statement.shape;
    this.shape =
      known && known.types === this.typeParsers && sameFields(known.fields, message.fields)
        ? known
        : (this.statement.shape = rowShape(message.fields, this.typeParsers));
    (this as unknown as QueryInternals)._result.fields = message.fields;
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    const self = this as unknown as QueryInternals;
    const shape = this.shape;
    if (self._canceledDueToError || !shape || this.settingPlan) return;
    const values = message.fields;
    const row: Record<string, unknown> = { ...shape.empty };
    try {
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        if (value !== null) row[shape.fields[i].name] = shape.parsers[i](value);
      }
    } catch (error) {
      self._canceledDueToError = error as Error;
      return;
    }
    self._result.rows.push(row);
  }
}

/** A statement as PostgreSQL received it: parameters in their text form (what `pg` sends, typed `unknown`). */
export interface CapturedStatement {
  text: string;
  params: (string | null)[];
  prepared: boolean;
}

/** A parameter in the text form `pg` sends it in (arrays as array literals, dates in ISO 8601). */
export function parameterText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) {
    const element = (item: unknown) => {
      const text = parameterText(item);
      return text === null ? 'NULL' : `"${text.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
    };
    return `{${value.map(element).join(',')}}`;
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return value.toString();
  return JSON.stringify(value) ?? null;
}

/**
 * A parameter in a form pg sends as it is: an array of numbers as an array literal of bare numbers (`{1,-2.5}`),
 * which PostgreSQL reads exactly as pg's own form (`{"1","-2.5"}`: each element quoted and escaped, two regular
 * expressions per element), with the same digits (Number#toString both ways). A circle's grid statement sends about
 * 1,100 numbers in 11 arrays: 250–450 µs of Node per statement in pg's form, 90–140 in this one (issue 22). Any
 * other value is left to pg.
 */
export function numberArrayText(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  for (const item of value) if (typeof item !== 'number') return value;
  return `{${value.join(',')}}`;
}

const INT4_OID = 23;
const FLOAT8_OID = 701;
const ARRAY_CASTS: Record<string, number> = {
  int: INT4_OID,
  integer: INT4_OID,
  int4: INT4_OID,
  float8: FLOAT8_OID,
};

/**
 * Per parameter of a statement, the element type of the number array PostgreSQL takes it as (int4 or float8), or 0:
 * a parameter is such an array when every place the text names it is a cast to `int[]` or `float8[]` (so PostgreSQL
 * gives the parameter that type: the list's runsArray and byIdsQuery write theirs so).
 */
export function binaryArrayTypes(text: string): number[] {
  const casts = new Map<number, number>();
  const uses = new Map<number, number>();
  for (const match of text.matchAll(
    /\$(\d+)(?!\d)(?:::(int|integer|int4|float8)\[\](?![\w[]))?/g,
  )) {
    const index = Number(match[1]) - 1;
    uses.set(index, (uses.get(index) ?? 0) + 1);
    const oid = match[2] === undefined ? -1 : ARRAY_CASTS[match[2]];
    const known = casts.get(index);
    casts.set(index, known === undefined || known === oid ? oid : -1);
  }
  const types: number[] = [];
  for (const [index, oid] of casts) types[index] = oid > 0 && uses.get(index) ? oid : 0;
  return Array.from(types, (oid) => oid ?? 0);
}

/**
 * An array of numbers in PostgreSQL's binary array format (array_send: one dimension, no nulls, lower bound 1) with
 * elements of `oid` (int4 or float8), or null when one of its values is not one PostgreSQL would read from its text
 * form as that type (not a number; for int4, not an integer of 32 bits): that value keeps the text form, and its
 * error. The values are the text form's, exactly: the same doubles (the text's digits read back), −0 as 0 (its text
 * is `0`). pg sends a Buffer parameter in binary. A dense circle's grid statement carries about 1,100 numbers in 11
 * arrays: written as text (numberArrayText), each float costs Node a shortest round-trip conversion and PostgreSQL a
 * strtod (at 1M, numberArrayText was 41 µs of sampled Node time per proximity-random request on average, issue 22,
 * brief 22n).
 */
export function binaryNumberArray(values: unknown, oid: number): Buffer | null {
  if (!Array.isArray(values)) return null;
  const width = oid === INT4_OID ? 4 : 8;
  for (const value of values) {
    if (typeof value !== 'number') return null;
    if (width === 4 && !(Number.isInteger(value) && value >= -2147483648 && value <= 2147483647))
      return null;
  }
  const n = values.length;
  const bytes = Buffer.allocUnsafe(n === 0 ? 12 : 20 + n * (4 + width));
  bytes.writeInt32BE(n === 0 ? 0 : 1, 0);
  bytes.writeInt32BE(0, 4);
  bytes.writeUInt32BE(oid, 8);
  if (n === 0) return bytes;
  bytes.writeInt32BE(n, 12);
  bytes.writeInt32BE(1, 16);
  let at = 20;
  for (const value of values as number[]) {
    bytes.writeInt32BE(width, at);
    // `value + 0` is 0 for −0, as its text form.
    if (width === 4) bytes.writeInt32BE(value + 0, at + 4);
    else bytes.writeDoubleBE(value + 0, at + 4);
    at += 4 + width;
  }
  return bytes;
}

/**
 * Reads with named prepared statements on the app's pool. TypeORM's `query` never prepares, and for statements that
 * are costly to plan and run in a few shapes (proximity lists, the map's cells and tiles) PostgreSQL's planning was a
 * third of the work. `pg` prepares a statement per connection when it has a `name`, so this is the one place that
 * takes a client out of TypeORM's pool (the driver's `master` pool: TypeORM has no public accessor for it).
 */
@Injectable()
export class PreparedReader {
  /** A random id per pooled connection (see read). */
  private readonly connectionIds = new WeakMap<pg.PoolClient, string>();
  /**
   * Statement texts by length, each with its digest and row shape (statements come in a few dozen shapes; a digest
   * each time was measurable). Keyed by length, not by text: a Map keyed by text hashes every character of each
   * newly built text (a place list's 2–5 KB: 5–15 µs per read, the longest single step of such a read in Node, issue
   * 22), where texts of one length are few and compared with `===` (what pg does anyway with the parsed text).
   */
  private readonly statements = new Map<number, { text: string; info: StatementInfo }[]>();
  private statementCount = 0;
  /** `npm run bench` only (see BenchController): the next statements read, to replay them alone with pgbench. */
  private capture: { limit: number; statements: CapturedStatement[] } | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs a read. A `prepared` statement is parsed once per pooled connection and then only executed, named after its
   * text (identical statements share a name). PostgreSQL plans it with the actual values for the first executions and
   * keeps a generic plan only when that is estimated to cost no more; a `generic` one runs on its generic plan from
   * its first execution (PreparedRead: for statements written so that their plan does not depend on their values,
   * whose custom plans only cost planning). Unprepared reads go through TypeORM as usual.
   * Prepared reads parse `timestamptz` with parseTimestamptz (the same Dates as pg's parser, cheaper), or with
   * `timestamps: 'iso'` into the ISO 8601 text the Date's `toISOString()` would give (isoTimestamptz: for rows whose
   * timestamps are only sent on as that text; a value it cannot write so is still a Date). Unprepared reads give
   * Dates either way.
   */
  async read<T>(
    text: string,
    params: unknown[],
    prepared: boolean | 'generic' = true,
    timestamps: 'date' | 'iso' = 'date',
  ): Promise<T[]> {
    if (this.capture && this.capture.statements.length < this.capture.limit)
      this.capture.statements.push({
        text,
        params: params.map(parameterText),
        prepared: prepared !== false,
      });
    if (!prepared) return this.dataSource.query<T[]>(text, params);
    const pool = (this.dataSource.driver as PostgresDriver).master as pg.Pool;
    const client = await pool.connect();
    let id = this.connectionIds.get(client);
    if (id === undefined) this.connectionIds.set(client, (id = randomBytes(6).toString('hex')));
    // The name holds a random id of the connection too: the embedded database serves every connection (of this
    // process and of others) from one session, where two connections preparing one name would collide.
    const statement = this.statement(text);
    const name = `lib_${id}_${statement.digest}`;
    try {
      const rows = await new Promise<T[]>((resolve, reject) => {
        client.query(
          new PreparedRead(
            name,
            text,
            this.parameters(statement, text, params),
            statement,
            (error, result) => (error ? reject(error) : resolve(result.rows as T[])),
            prepared === 'generic' ? `lib_${id}_generic` : null,
            timestamps === 'iso' ? ISO_TIMESTAMP_TYPES : FAST_TIMESTAMP_TYPES,
          ),
        );
      });
      client.release();
      return rows;
    } catch (error) {
      // A failed connection is closed rather than handed to the next request (with its prepared statements).
      client.release(error as Error);
      // The error TypeORM's `query` would raise for the same failure, so callers (and the database-unavailable
      // check, which reads `driverError`) see one kind whichever way a statement ran.
      throw new QueryFailedError(text, params, error as Error);
    }
  }

  /**
   * A prepared read's parameters as pg sends them: number arrays the statement casts to `int[]` or `float8[]` in
   * binary (binaryNumberArray), other number arrays as bare literals (numberArrayText), the rest as they are.
   */
  private parameters(statement: StatementInfo, text: string, params: unknown[]): unknown[] {
    const types = (statement.arrayTypes ??= binaryArrayTypes(text));
    return params.map((value, index) => {
      if (!Array.isArray(value)) return value;
      const oid = types[index];
      return (oid ? binaryNumberArray(value, oid) : null) ?? numberArrayText(value);
    });
  }

  private statement(text: string): StatementInfo {
    const sameLength = this.statements.get(text.length);
    if (sameLength !== undefined) {
      for (const known of sameLength) if (known.text === text) return known.info;
    }
    // Bounded in case a caller ever builds texts with values in them.
    if (this.statementCount >= 1000) {
      this.statements.clear();
      this.statementCount = 0;
    }
    const info = { digest: createHash('sha1').update(text).digest('base64url'), shape: null };
    const entry = { text, info };
    const list = this.statements.get(text.length);
    if (list === undefined) this.statements.set(text.length, [entry]);
    else list.push(entry);
    this.statementCount += 1;
    return info;
  }

  /** Starts recording the next `limit` reads (replacing any earlier recording). */
  startCapture(limit: number): void {
    this.capture = { limit, statements: [] };
  }

  /** The reads recorded since startCapture; recording stops. */
  takeCapture(): CapturedStatement[] {
    const statements = this.capture?.statements ?? [];
    this.capture = null;
    return statements;
  }
}
