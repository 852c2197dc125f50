import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import type { S3MediaSettings } from '../common/media/s3-media-storage.js';
import { EnvironmentVariables } from './env.schema.js';

/** `staff`: requests authenticated as staff on staff endpoints, counted per user instead of per IP. */
export type RateLimitTier =
  | 'read'
  | 'write'
  | 'login'
  | 'register'
  | 'refresh'
  | 'social'
  | 'staff'
  | 'map'
  | 'export'
  | 'password_reset';

export const APNS_PRODUCTION_URL = 'https://api.push.apple.com';
export const APNS_SANDBOX_URL = 'https://api.sandbox.push.apple.com';

/** APNs provider API with token-based authentication (an ES256 JWT signed with the team's .p8 key). */
export interface ApnsConfig {
  keyId: string;
  teamId: string;
  /** PKCS#8 PEM of the P-256 key. */
  privateKey: string;
  topic: string;
  productionUrl: string;
  sandboxUrl: string;
  /** Test only: PEM of an extra certificate authority trusted for the connection (the loopback double's). */
  testCa: string | null;
}

/**
 * MAP_TEXT_FILTER_MAX_CANDIDATES by default. A feed with a text filter (q, search, city, postal_code) groups the
 * matching libraries themselves (the grid has no facet for text), reading either the box's libraries (when the box
 * holds at most this many) or the filter's matches (when at most this many match anywhere): a heap fetch each,
 * 5–40 µs at 1M libraries. When both are larger the request is refused (422 `too_many_matches`).
 */
export const DEFAULT_MAP_TEXT_FILTER_CANDIDATES = 5_000;

export const LAUNCH_GATES = [
  'plan',
  'community',
  'licence',
  'consent_copy',
  'attribution',
  'rollback',
] as const;

/** The client-side query bound defaults to the statement timeout plus this (a server that answers ends first). */
const DEFAULT_QUERY_TIMEOUT_MARGIN_SECONDS = 5;

/** Typed, validated configuration. Built once from the environment; the only view of it the app gets. */
export class AppConfig {
  readonly nodeEnv!: 'development' | 'production' | 'test';
  readonly port!: number;
  readonly host!: string;
  readonly logLevel!: string;
  readonly database!: {
    /** Connection URL; null means "start the embedded database in dataDir". */
    url: string | null;
    poolSize: number;
    /** Per-statement limit on the app's connections (seconds, 0 = none). */
    statementTimeoutSeconds: number;
    /** A session idle inside an open transaction this long is ended by the server (seconds, 0 = none). */
    idleInTransactionTimeoutSeconds: number;
    /** Longest wait for a free pool connection before the request answers 503 (seconds). */
    poolWaitSeconds: number;
    /** An idle pool connection (with its prepared statements) is closed after this long (seconds, 0 = never). */
    poolIdleSeconds: number;
    /**
     * Client-side bound on one query (seconds, 0 = none), for a database that stopped answering: the query fails
     * (503) and its connection is discarded. Longer than the statement timeout.
     */
    queryTimeoutSeconds: number;
  };
  readonly dataDir!: string;
  readonly mediaRoot!: string;
  /** Where media lives: MEDIA_ROOT on this machine, or an S3-compatible bucket shared by every instance. */
  readonly mediaStorage!: { kind: 'local' } | ({ kind: 's3' } & S3MediaSettings);
  /** GET /media/<key> answers 302 to `<mediaPublicBaseUrl>/<key>` when set (a CDN or public bucket). */
  readonly mediaPublicBaseUrl!: string | null;
  /** The orphan sweep removes media files no row references once they are this old; runs every intervalHours (0 = start only). */
  readonly mediaSweep!: { graceHours: number; intervalHours: number };
  /** A create's `Idempotency-Key` answers its original result for this long, then expires (and is swept). */
  readonly idempotencyKeyTtlHours!: number;
  readonly redisUrl!: string | null;
  /** Prefix of every Redis key the service writes (rate limits, caches, replay guards). */
  readonly redisKeyPrefix!: string;
  /** Redis is an accelerator: a command slower than this fails over to the in-process/database path. */
  readonly redisCommandTimeoutMs!: number;
  /** After Redis failed, the next try (half-open circuit) comes this much later. */
  readonly redisRetryAfterMs!: number;
  /** Express `trust proxy` value; false when unset. */
  readonly trustProxy!: boolean | number | string;
  readonly jwt!: { secret: string; accessTtlSeconds: number; refreshTtlSeconds: number };
  /** The staff console's cookie sessions: signed out after `idleSeconds` without a request, and after `maxSeconds`. */
  readonly adminSession!: { idleSeconds: number; maxSeconds: number };
  readonly rateLimit!: {
    enabled: boolean;
    windowSeconds: number;
    limits: Record<RateLimitTier, number>;
  };
  readonly social!: {
    apple: { clientIds: string[]; jwksUrl: string; issuer: string };
    google: { clientIds: string[]; jwksUrl: string; issuer: string };
  };
  readonly ai!: { baseUrl: string; apiKey: string; model: string } | null;
  readonly mapdb!: {
    writeEnabled: boolean;
    apiBaseUrl: string | null;
    oauthAccessToken: string | null;
    queryUrl: string | null;
    userAgent: string;
    planUrl: string | null;
    duplicateRadiusMeters: number;
    duplicateCheckMaxAgeSeconds: number;
    /** Batch confirm groups libraries of one city within this span, at most this many per changeset. */
    batchMaxSpanMeters: number;
    batchMaxSize: number;
    launchGates: string[];
  };
  /** The public map page's base map (style JSON URL or raster tile template); null: a plain background. */
  readonly mapStyleUrl!: string | null;
  /** The most libraries a text-filtered map feed reads (see MapRepository.findFeedCells). */
  readonly mapTextFilterMaxCandidates!: number;
  /** The service's public name (open-data attribution). */
  readonly serviceName!: string;
  /** The open-data export: regenerated every `intervalSeconds`; null = only on demand (`npm run cli -- export`). */
  readonly openDataExport!: { intervalSeconds: number | null };
  /** The contributor agreement in force (null: none) and whether new accounts must accept it. */
  readonly contributorAgreement!: { version: string | null; required: boolean };
  /** Outgoing mail: SMTP, or `.eml` files under DATA_DIR/mail when `smtpUrl` is null. */
  readonly mail!: { smtpUrl: string | null; from: string; publicBaseUrl: string; dropDir: string };
  /** The notification worker's poll interval on this instance (ms); null: this instance sends nothing. */
  readonly notifications!: { pollIntervalMs: number | null };
  /** Push notifications; null: not configured (no push is queued). */
  readonly apns!: ApnsConfig | null;
  /** Serve the `npm run bench` routes under /api/v1/bench (ceiling, memo counters, SQL capture); off unless BENCH_CEILING_ROUTE=true. */
  readonly benchCeilingRoute!: boolean;

  constructor(values: AppConfig) {
    Object.assign(this, values);
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const DURATION_TEXT = /^(\d+)(ms|s|m|h|d)?$/;

export function parseDuration(text: string): number {
  const match = DURATION_TEXT.exec(text);
  if (!match) throw new Error(`bad duration ${text}`);
  const value = Number(match[1]);
  switch (match[2]) {
    case 'ms':
      return Math.max(1, Math.round(value / 1000));
    case 'm':
      return value * 60;
    case 'h':
      return value * 3600;
    case 'd':
      return value * 86400;
    default:
      return value;
  }
}

function flatten(errors: ValidationError[]): string[] {
  return errors.flatMap((error) =>
    Object.values(error.constraints ?? {}).map((msg) => `${error.property}: ${msg}`),
  );
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value
    .split(',')
    .map((part) => part.trim())
    .join(',');
}

/** Reads the embedded default's JWT secret from its data folder, creating it on first start. */
function embeddedJwtSecret(dataDir: string): string {
  const file = join(dataDir, 'jwt-secret');
  try {
    const existing = readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch {
    // first start: fall through and create one
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

export function loadConfig(source: Record<string, string | undefined> = process.env): AppConfig {
  const env = plainToInstance(
    EnvironmentVariables,
    { ...source },
    { excludeExtraneousValues: false },
  );
  const problems = flatten(validateSync(env, { whitelist: false, forbidUnknownValues: false }));
  const gates = list(env.MAPDB_LAUNCH_GATES);
  const unknownGates = gates.filter((gate) => !(LAUNCH_GATES as readonly string[]).includes(gate));
  if (unknownGates.length) {
    problems.push(
      `MAPDB_LAUNCH_GATES: unknown gate(s) ${unknownGates.join(', ')}; known: ${LAUNCH_GATES.join(', ')}`,
    );
  }
  if (env.MAPDB_WRITE_ENABLED && !env.MAPDB_PLAN_URL) {
    problems.push('MAPDB_PLAN_URL: required when MAPDB_WRITE_ENABLED=true (changeset description)');
  }
  if (env.MAPDB_WRITE_ENABLED && !env.MAPDB_USER_AGENT) {
    problems.push(
      'MAPDB_USER_AGENT: required when MAPDB_WRITE_ENABLED=true (application/version plus a contact URL)',
    );
  }
  if (env.CONTRIBUTOR_AGREEMENT_REQUIRED && !env.CONTRIBUTOR_AGREEMENT_VERSION) {
    problems.push(
      'CONTRIBUTOR_AGREEMENT_VERSION: required when CONTRIBUTOR_AGREEMENT_REQUIRED=true',
    );
  }
  const exportIntervalText = env.EXPORT_INTERVAL ?? '1d';
  const exportInterval =
    exportIntervalText === 'off' || !DURATION_TEXT.test(exportIntervalText)
      ? null
      : parseDuration(exportIntervalText);
  if (exportInterval !== null && exportInterval < 60) {
    problems.push('EXPORT_INTERVAL: must be at least 1m (or off)');
  }
  if (env.MEDIA_PUBLIC_BASE_URL && env.MEDIA_STORAGE !== 's3') {
    problems.push(
      'MEDIA_PUBLIC_BASE_URL: needs MEDIA_STORAGE=s3 (it points at a CDN or public copy of the bucket)',
    );
  }
  const apns = apnsConfig(env, problems);
  const pollText = env.NOTIFICATIONS_POLL_INTERVAL ?? '2s';
  const pollIntervalMs =
    pollText === 'off' || !DURATION_TEXT.test(pollText) ? null : durationMs(pollText);
  if (pollIntervalMs !== null && (pollIntervalMs < 100 || pollIntervalMs > 3_600_000)) {
    problems.push('NOTIFICATIONS_POLL_INTERVAL: must be between 100ms and 1h (or off)');
  }
  if (env.NODE_ENV === 'production' && env.SMTP_URL && !env.PUBLIC_BASE_URL) {
    problems.push('PUBLIC_BASE_URL: required with SMTP_URL in production (links in mails)');
  }
  const statementTimeoutSeconds = env.DATABASE_STATEMENT_TIMEOUT_SECONDS ?? 30;
  const queryTimeoutSeconds =
    env.DATABASE_QUERY_TIMEOUT_SECONDS ??
    (statementTimeoutSeconds > 0
      ? statementTimeoutSeconds + DEFAULT_QUERY_TIMEOUT_MARGIN_SECONDS
      : 0);
  if (
    env.DATABASE_QUERY_TIMEOUT_SECONDS !== undefined &&
    queryTimeoutSeconds > 0 &&
    statementTimeoutSeconds > 0 &&
    queryTimeoutSeconds <= statementTimeoutSeconds
  ) {
    problems.push(
      'DATABASE_QUERY_TIMEOUT_SECONDS: must be longer than DATABASE_STATEMENT_TIMEOUT_SECONDS (or 0: none)',
    );
  }
  if (problems.length) throw new ConfigError(problems);

  const dataDir = resolve(env.DATA_DIR ?? './data');
  const databaseUrl = env.DATABASE_URL ?? null;
  const aiConfigured = Boolean(env.AI_API_BASE_URL && env.AI_API_KEY && env.AI_MODEL);

  return new AppConfig({
    nodeEnv: (env.NODE_ENV ?? 'development') as AppConfig['nodeEnv'],
    port: env.PORT ?? 3000,
    host: env.HOST ?? '0.0.0.0',
    logLevel: env.LOG_LEVEL ?? (env.NODE_ENV === 'test' ? 'silent' : 'info'),
    database: {
      url: databaseUrl,
      poolSize: env.DATABASE_POOL_SIZE ?? 10,
      statementTimeoutSeconds,
      idleInTransactionTimeoutSeconds: env.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS ?? 60,
      poolWaitSeconds: env.DATABASE_POOL_WAIT_SECONDS ?? 5,
      poolIdleSeconds: env.DATABASE_POOL_IDLE_SECONDS ?? 300,
      queryTimeoutSeconds,
    },
    dataDir,
    mediaRoot: resolve(env.MEDIA_ROOT ?? join(dataDir, 'media')),
    mediaStorage:
      env.MEDIA_STORAGE === 's3'
        ? {
            kind: 's3',
            bucket: env.S3_BUCKET!,
            region: env.S3_REGION ?? 'us-east-1',
            endpoint: env.S3_ENDPOINT ?? null,
            forcePathStyle: env.S3_FORCE_PATH_STYLE ?? false,
            credentials:
              env.S3_ACCESS_KEY_ID && env.S3_SECRET_ACCESS_KEY
                ? { accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY }
                : null,
            prefix: env.S3_PREFIX ?? '',
          }
        : { kind: 'local' },
    mediaPublicBaseUrl: env.MEDIA_PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? null,
    mediaSweep: {
      graceHours: env.MEDIA_SWEEP_GRACE_HOURS ?? 24,
      intervalHours: env.MEDIA_SWEEP_INTERVAL_HOURS ?? 6,
    },
    idempotencyKeyTtlHours: env.IDEMPOTENCY_KEY_TTL_HOURS ?? 24,
    redisUrl: env.REDIS_URL ?? null,
    redisKeyPrefix: env.REDIS_KEY_PREFIX ?? 'bookcase:',
    redisCommandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS ?? 200,
    redisRetryAfterMs: env.REDIS_RETRY_AFTER_MS ?? 1000,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    jwt: {
      secret: env.JWT_SECRET ?? embeddedJwtSecret(dataDir),
      accessTtlSeconds: parseDuration(env.JWT_ACCESS_TTL ?? '5m'),
      refreshTtlSeconds: parseDuration(env.JWT_REFRESH_TTL ?? '30d'),
    },
    adminSession: {
      idleSeconds: parseDuration(env.ADMIN_SESSION_IDLE_TTL ?? '30m'),
      maxSeconds: parseDuration(env.ADMIN_SESSION_MAX_TTL ?? '12h'),
    },
    rateLimit: {
      enabled: env.RATE_LIMIT_ENABLED ?? true,
      windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS ?? 300,
      limits: {
        read: env.RATE_LIMIT_READ ?? 60,
        write: env.RATE_LIMIT_WRITE ?? 10,
        login: env.RATE_LIMIT_LOGIN ?? 10,
        register: env.RATE_LIMIT_REGISTER ?? 5,
        refresh: env.RATE_LIMIT_REFRESH ?? 15,
        social: env.RATE_LIMIT_SOCIAL ?? 10,
        staff: env.RATE_LIMIT_STAFF ?? 600,
        map: env.RATE_LIMIT_MAP ?? 600,
        export: env.RATE_LIMIT_EXPORT ?? 30,
        password_reset: env.RATE_LIMIT_PASSWORD_RESET ?? 5,
      },
    },
    social: {
      apple: {
        clientIds: list(env.APPLE_CLIENT_IDS),
        jwksUrl: env.APPLE_JWKS_URL ?? 'https://appleid.apple.com/auth/keys',
        issuer: env.APPLE_ISSUER ?? 'https://appleid.apple.com',
      },
      google: {
        clientIds: list(env.GOOGLE_CLIENT_IDS),
        jwksUrl: env.GOOGLE_JWKS_URL ?? 'https://www.googleapis.com/oauth2/v3/certs',
        issuer: env.GOOGLE_ISSUER ?? 'https://accounts.google.com',
      },
    },
    ai: aiConfigured
      ? { baseUrl: env.AI_API_BASE_URL!, apiKey: env.AI_API_KEY!, model: env.AI_MODEL! }
      : null,
    mapdb: {
      writeEnabled: env.MAPDB_WRITE_ENABLED ?? false,
      apiBaseUrl: env.MAPDB_API_BASE_URL ?? null,
      oauthAccessToken: env.MAPDB_OAUTH_ACCESS_TOKEN ?? null,
      queryUrl: env.MAPDB_QUERY_URL ?? null,
      userAgent: env.MAPDB_USER_AGENT ?? 'bookcase-directory/0.1.0',
      planUrl: env.MAPDB_PLAN_URL ?? null,
      duplicateRadiusMeters: env.MAPDB_DUPLICATE_RADIUS_METERS ?? 100,
      duplicateCheckMaxAgeSeconds: env.MAPDB_DUPLICATE_CHECK_MAX_AGE_SECONDS ?? 900,
      batchMaxSpanMeters: env.MAPDB_BATCH_MAX_SPAN_METERS ?? 2000,
      batchMaxSize: env.MAPDB_BATCH_MAX_SIZE ?? 10,
      launchGates: gates,
    },
    mapStyleUrl: env.MAP_STYLE_URL || null,
    mapTextFilterMaxCandidates:
      env.MAP_TEXT_FILTER_MAX_CANDIDATES ?? DEFAULT_MAP_TEXT_FILTER_CANDIDATES,
    serviceName: env.SERVICE_NAME ?? 'Bookcase Directory',
    openDataExport: { intervalSeconds: exportInterval },
    contributorAgreement: {
      version: env.CONTRIBUTOR_AGREEMENT_VERSION ?? null,
      required: env.CONTRIBUTOR_AGREEMENT_REQUIRED ?? false,
    },
    mail: {
      smtpUrl: env.SMTP_URL ?? null,
      from: env.MAIL_FROM ?? `"${env.SERVICE_NAME ?? 'Bookcase Directory'}" <no-reply@localhost>`,
      publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT ?? 3000}`).replace(
        /\/+$/,
        '',
      ),
      dropDir: join(dataDir, 'mail'),
    },
    notifications: { pollIntervalMs },
    apns: apns ?? null,
    benchCeilingRoute: env.BENCH_CEILING_ROUTE ?? false,
  });
}

function durationMs(text: string): number {
  const match = DURATION_TEXT.exec(text)!;
  const value = Number(match[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 's'] ?? 1000;
  return value * unit;
}

/** The PEM text of a setting that holds either PEM (newlines possibly written as \\n) or a file path. */
function pemOrFile(value: string): string {
  if (value.startsWith('-----BEGIN')) return value.replace(/\\n/g, '\n');
  return readFileSync(value, 'utf8');
}

/** APNs settings: all four of key id, team id, key and topic, or none; the key must be an EC P-256 key. */
function apnsConfig(env: EnvironmentVariables, problems: string[]): ApnsConfig | null {
  const required = {
    APNS_KEY_ID: env.APNS_KEY_ID,
    APNS_TEAM_ID: env.APNS_TEAM_ID,
    APNS_PRIVATE_KEY: env.APNS_PRIVATE_KEY,
    APNS_TOPIC: env.APNS_TOPIC,
  };
  const missing = Object.entries(required).filter(([, value]) => !value);
  if (missing.length === 4) return null;
  if (missing.length > 0) {
    problems.push(
      `${missing.map(([name]) => name).join(', ')}: required when any APNS_* setting is set`,
    );
    return null;
  }
  let privateKey = '';
  try {
    privateKey = pemOrFile(env.APNS_PRIVATE_KEY!);
    const key = createPrivateKey(privateKey);
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      problems.push('APNS_PRIVATE_KEY: must be the P-256 (ES256) .p8 key from Apple');
    }
  } catch {
    problems.push('APNS_PRIVATE_KEY: not a readable PEM private key (PEM text or a file path)');
  }
  let testCa: string | null = null;
  if (env.APNS_TEST_CA_FILE) {
    try {
      testCa = readFileSync(env.APNS_TEST_CA_FILE, 'utf8');
      new X509Certificate(testCa);
    } catch {
      problems.push('APNS_TEST_CA_FILE: not a readable PEM certificate');
    }
  }
  return {
    keyId: env.APNS_KEY_ID!,
    teamId: env.APNS_TEAM_ID!,
    privateKey,
    topic: env.APNS_TOPIC!,
    productionUrl: env.APNS_PRODUCTION_URL ?? APNS_PRODUCTION_URL,
    sandboxUrl: env.APNS_SANDBOX_URL ?? APNS_SANDBOX_URL,
    testCa,
  };
}
