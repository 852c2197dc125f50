import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';

/** Settings arrive as text (the environment) or, from tests and the CLI, as numbers and booleans. */
const asText = (value: unknown): string | undefined =>
  typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : undefined;

const toBool = ({ value }: { value: unknown }) => {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  const text = asText(value)?.trim().toLowerCase();
  if (text === undefined) return value;
  if (['true', '1', 'yes', 'on'].includes(text)) return true;
  if (['false', '0', 'no', 'off'].includes(text)) return false;
  return value;
};
const toInt = ({ value }: { value: unknown }) => {
  if (value === undefined || value === '') return undefined;
  const text = asText(value)?.trim();
  return text !== undefined && /^-?\d+$/.test(text) ? Number(text) : value;
};
const toTrimmed = ({ value }: { value: unknown }) => {
  const text = asText(value)?.trim();
  if (text === undefined) return value;
  return text === '' ? undefined : text;
};

const DURATION = /^\d+(ms|s|m|h|d)?$/;
const URL_OPTIONS = { require_tld: false, require_protocol: true, protocols: ['http', 'https'] };

/**
 * Every environment variable the service reads. Validated once at boot; all problems are reported together.
 */
export class EnvironmentVariables {
  @IsOptional()
  @IsIn(['development', 'production', 'test'])
  @Transform(toTrimmed)
  NODE_ENV?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  @Transform(toInt)
  PORT?: number;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  HOST?: string;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  @Transform(toTrimmed)
  LOG_LEVEL?: string;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  @Transform(toTrimmed)
  DATABASE_URL?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(200)
  @Transform(toInt)
  DATABASE_POOL_SIZE?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(86_400)
  @Transform(toInt)
  DATABASE_STATEMENT_TIMEOUT_SECONDS?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(86_400)
  @Transform(toInt)
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(600)
  @Transform(toInt)
  DATABASE_POOL_WAIT_SECONDS?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(86_400)
  @Transform(toInt)
  DATABASE_POOL_IDLE_SECONDS?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(86_400)
  @Transform(toInt)
  DATABASE_QUERY_TIMEOUT_SECONDS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(720)
  @Transform(toInt)
  IDEMPOTENCY_KEY_TTL_HOURS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(8760)
  @Transform(toInt)
  MEDIA_SWEEP_GRACE_HOURS?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(8760)
  @Transform(toInt)
  MEDIA_SWEEP_INTERVAL_HOURS?: number;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  DATA_DIR?: string;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  MEDIA_ROOT?: string;

  @IsOptional()
  @IsIn(['local', 's3'], { message: 'MEDIA_STORAGE must be local or s3' })
  @Transform(toTrimmed)
  MEDIA_STORAGE?: string;

  /** Where GET /media/<key> redirects (302) instead of streaming, e.g. a CDN or a public bucket. */
  @IsOptional()
  @IsUrl(URL_OPTIONS, { message: 'MEDIA_PUBLIC_BASE_URL must be an http(s) URL' })
  @Transform(toTrimmed)
  MEDIA_PUBLIC_BASE_URL?: string;

  @ValidateIf((env: EnvironmentVariables) => env.MEDIA_STORAGE === 's3')
  @IsString({ message: 'S3_BUCKET is required when MEDIA_STORAGE=s3' })
  @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    message: 'S3_BUCKET must be a bucket name (3-63 lower-case letters, digits, dots, hyphens)',
  })
  @Transform(toTrimmed)
  S3_BUCKET?: string;

  @IsOptional()
  @Matches(/^[a-z0-9-]+$/, { message: 'S3_REGION must be a region name such as eu-west-1' })
  @Transform(toTrimmed)
  S3_REGION?: string;

  @IsOptional()
  @IsUrl(URL_OPTIONS, { message: 'S3_ENDPOINT must be an http(s) URL' })
  @Transform(toTrimmed)
  S3_ENDPOINT?: string;

  @IsOptional()
  @IsBoolean({ message: 'S3_FORCE_PATH_STYLE must be true or false' })
  @Transform(toBool)
  S3_FORCE_PATH_STYLE?: boolean;

  @ValidateIf((env: EnvironmentVariables) => env.S3_SECRET_ACCESS_KEY !== undefined)
  @IsString({ message: 'S3_ACCESS_KEY_ID is required with S3_SECRET_ACCESS_KEY' })
  @Transform(toTrimmed)
  S3_ACCESS_KEY_ID?: string;

  @ValidateIf((env: EnvironmentVariables) => env.S3_ACCESS_KEY_ID !== undefined)
  @IsString({ message: 'S3_SECRET_ACCESS_KEY is required with S3_ACCESS_KEY_ID' })
  @Transform(toTrimmed)
  S3_SECRET_ACCESS_KEY?: string;

  @IsOptional()
  @Matches(/^([a-z0-9][a-z0-9_.-]*\/)+$/i, {
    message: 'S3_PREFIX must be folder names ending with a slash, e.g. bookcase/',
  })
  @Transform(toTrimmed)
  S3_PREFIX?: string;

  @IsOptional()
  @Matches(/^redis(s)?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  @Transform(toTrimmed)
  REDIS_URL?: string;

  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(10_000)
  @Transform(toInt)
  REDIS_COMMAND_TIMEOUT_MS?: number;

  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(600_000)
  @Transform(toInt)
  REDIS_RETRY_AFTER_MS?: number;

  @IsOptional()
  @Matches(/^[A-Za-z0-9:_-]{1,64}$/, {
    message: 'REDIS_KEY_PREFIX may hold letters, digits, : _ - (≤ 64)',
  })
  @Transform(toTrimmed)
  REDIS_KEY_PREFIX?: string;

  @IsOptional()
  @Matches(
    /^(true|false|\d+|[0-9a-fA-F:.]+(\/\d+)?(\s*,\s*[0-9a-fA-F:.]+(\/\d+)?)*|loopback|linklocal|uniquelocal)$/,
    {
      message: 'TRUST_PROXY must be true, false, a hop count, or a comma list of addresses/CIDRs',
    },
  )
  @Transform(toTrimmed)
  TRUST_PROXY?: string;

  @ValidateIf(
    (env: EnvironmentVariables) => env.DATABASE_URL !== undefined || env.NODE_ENV === 'production',
  )
  @IsString({ message: 'JWT_SECRET is required when DATABASE_URL is set or NODE_ENV=production' })
  @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters' })
  @Transform(toTrimmed)
  JWT_SECRET?: string;

  @IsOptional()
  @Matches(DURATION, { message: 'JWT_ACCESS_TTL must be a duration such as 300, 5m or 1h' })
  @Transform(toTrimmed)
  JWT_ACCESS_TTL?: string;

  @IsOptional()
  @Matches(DURATION, { message: 'JWT_REFRESH_TTL must be a duration such as 30d' })
  @Transform(toTrimmed)
  JWT_REFRESH_TTL?: string;

  @IsOptional()
  @Matches(DURATION, { message: 'ADMIN_SESSION_IDLE_TTL must be a duration such as 30m' })
  @Transform(toTrimmed)
  ADMIN_SESSION_IDLE_TTL?: string;

  @IsOptional()
  @Matches(DURATION, { message: 'ADMIN_SESSION_MAX_TTL must be a duration such as 12h' })
  @Transform(toTrimmed)
  ADMIN_SESSION_MAX_TTL?: string;

  @IsOptional()
  @IsBoolean()
  @Transform(toBool)
  RATE_LIMIT_ENABLED?: boolean;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86400)
  @Transform(toInt)
  RATE_LIMIT_WINDOW_SECONDS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_READ?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_WRITE?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_LOGIN?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_REGISTER?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_REFRESH?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_SOCIAL?: number;

  /** The map feed and vector tiles: a map view loads a dozen tiles per pan. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_MAP?: number;

  /**
   * The map feed with a text filter (q, search, city, postal_code) reads at most this many libraries: the box's or
   * the filter's matches, whichever side has at most this many; otherwise 422 too_many_matches.
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  @Transform(toInt)
  MAP_TEXT_FILTER_MAX_CANDIDATES?: number;

  /**
   * The map page's base map: a MapLibre style JSON URL, or a raster tile URL template with {z}, {x} and {y}.
   * Unset: the bookcases on a plain background.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s"'<>`]+$/, {
    message:
      'MAP_STYLE_URL must be an http(s) URL (a style JSON, or raster tiles with {z}/{x}/{y})',
  })
  @Transform(toTrimmed)
  MAP_STYLE_URL?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_STAFF?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_EXPORT?: number;

  /** The service's public name, used in the open-data attribution. */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Transform(toTrimmed)
  SERVICE_NAME?: string;

  /** How often the open-data export is regenerated (a duration, at least 1m), or `off` (CLI only). */
  @IsOptional()
  @Matches(/^(off|\d+(ms|s|m|h|d)?)$/, {
    message: 'EXPORT_INTERVAL must be a duration such as 1d or 6h, or off',
  })
  @Transform(toTrimmed)
  EXPORT_INTERVAL?: string;

  /** The contributor agreement's current version (e.g. `2026-06`); unset means no agreement is in force. */
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,64}$/, {
    message: 'CONTRIBUTOR_AGREEMENT_VERSION may hold letters, digits, . _ - (≤ 64)',
  })
  @Transform(toTrimmed)
  CONTRIBUTOR_AGREEMENT_VERSION?: string;

  @IsOptional()
  @IsBoolean()
  @Transform(toBool)
  CONTRIBUTOR_AGREEMENT_REQUIRED?: boolean;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  APPLE_CLIENT_IDS?: string;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  GOOGLE_CLIENT_IDS?: string;

  @IsOptional()
  @IsUrl(URL_OPTIONS)
  @Transform(toTrimmed)
  APPLE_JWKS_URL?: string;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  APPLE_ISSUER?: string;

  @IsOptional()
  @IsUrl(URL_OPTIONS)
  @Transform(toTrimmed)
  GOOGLE_JWKS_URL?: string;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  GOOGLE_ISSUER?: string;

  @IsOptional()
  @IsUrl(URL_OPTIONS)
  @Transform(toTrimmed)
  AI_API_BASE_URL?: string;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  AI_API_KEY?: string;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  AI_MODEL?: string;

  @IsOptional()
  @IsBoolean()
  @Transform(toBool)
  MAPDB_WRITE_ENABLED?: boolean;

  @ValidateIf(
    (env: EnvironmentVariables) =>
      env.MAPDB_WRITE_ENABLED === true || env.MAPDB_API_BASE_URL !== undefined,
  )
  @IsUrl(URL_OPTIONS, {
    message: 'MAPDB_API_BASE_URL must be an http(s) URL (required when MAPDB_WRITE_ENABLED=true)',
  })
  @Transform(toTrimmed)
  MAPDB_API_BASE_URL?: string;

  @ValidateIf((env: EnvironmentVariables) => env.MAPDB_WRITE_ENABLED === true)
  @IsString({ message: 'MAPDB_OAUTH_ACCESS_TOKEN is required when MAPDB_WRITE_ENABLED=true' })
  @Transform(toTrimmed)
  MAPDB_OAUTH_ACCESS_TOKEN?: string;

  @IsOptional()
  @IsUrl(URL_OPTIONS)
  @Transform(toTrimmed)
  MAPDB_QUERY_URL?: string;

  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  MAPDB_USER_AGENT?: string;

  @IsOptional()
  @IsUrl(URL_OPTIONS)
  @Transform(toTrimmed)
  MAPDB_PLAN_URL?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  @Transform(toInt)
  MAPDB_DUPLICATE_RADIUS_METERS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  MAPDB_DUPLICATE_CHECK_MAX_AGE_SECONDS?: number;

  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(50_000)
  @Transform(toInt)
  MAPDB_BATCH_MAX_SPAN_METERS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  @Transform(toInt)
  MAPDB_BATCH_MAX_SIZE?: number;

  @IsOptional()
  @Matches(/^[a-z_]+(\s*,\s*[a-z_]+)*$/, {
    message: 'MAPDB_LAUNCH_GATES must be a comma list of gate names',
  })
  @Transform(toTrimmed)
  MAPDB_LAUNCH_GATES?: string;

  /** `npm run bench` only: serve the DB-free GET /api/v1/bench/ceiling. */
  @IsOptional()
  @IsBoolean()
  @Transform(toBool)
  BENCH_CEILING_ROUTE?: boolean;
  /** SMTP server of outgoing mail (`smtp://user:pass@host:587`, `smtps://…`); unset: `.eml` files in DATA_DIR/mail. */
  @IsOptional()
  @Matches(/^smtps?:\/\/[^\s]+$/, { message: 'SMTP_URL must be an smtp:// or smtps:// URL' })
  @Transform(toTrimmed)
  SMTP_URL?: string;

  /** Sender of outgoing mail, `Name <address>` or an address. */
  @IsOptional()
  @IsString()
  @MaxLength(300)
  @Transform(toTrimmed)
  MAIL_FROM?: string;

  /** Where people reach this service (links in mails: the reset-password page). */
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  @Transform(toTrimmed)
  PUBLIC_BASE_URL?: string;

  /** How often the notification worker looks for due messages, or `off` on this instance. */
  @IsOptional()
  @Matches(/^(off|\d+(ms|s|m|h|d)?)$/, {
    message: 'NOTIFICATIONS_POLL_INTERVAL must be a duration such as 2s, or off',
  })
  @Transform(toTrimmed)
  NOTIFICATIONS_POLL_INTERVAL?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Transform(toInt)
  RATE_LIMIT_PASSWORD_RESET?: number;

  /** APNs provider API token authentication: the key id of the .p8 key. */
  @IsOptional()
  @Matches(/^[A-Z0-9]{10}$/, { message: 'APNS_KEY_ID must be the 10-character key id' })
  @Transform(toTrimmed)
  APNS_KEY_ID?: string;

  @IsOptional()
  @Matches(/^[A-Z0-9]{10}$/, { message: 'APNS_TEAM_ID must be the 10-character team id' })
  @Transform(toTrimmed)
  APNS_TEAM_ID?: string;

  /** The .p8 key: its PEM text (newlines may be written as \\n) or the path of the file. */
  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  APNS_PRIVATE_KEY?: string;

  /** The app's bundle id (the `apns-topic`). */
  @IsOptional()
  @Matches(/^[A-Za-z0-9.-]{1,155}$/, { message: 'APNS_TOPIC must be a bundle id' })
  @Transform(toTrimmed)
  APNS_TOPIC?: string;

  /** Overrides of the APNs hosts (tests, proxies): `https://host[:port]`. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['https'] })
  @Transform(toTrimmed)
  APNS_PRODUCTION_URL?: string;

  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['https'] })
  @Transform(toTrimmed)
  APNS_SANDBOX_URL?: string;

  /** Test only: a PEM file of an extra certificate authority trusted for the APNs connection. */
  @IsOptional()
  @IsString()
  @Transform(toTrimmed)
  APNS_TEST_CA_FILE?: string;
}
