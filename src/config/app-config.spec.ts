import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, parseDuration } from './app-config.js';

const SECRET = 'a'.repeat(40);
const dir = () => mkdtempSync(join(tmpdir(), 'bookcase-config-'));

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u@h/db', JWT_SECRET: SECRET });
    expect(config.port).toBe(3000);
    expect(config.database).toEqual({
      url: 'postgres://u@h/db',
      poolSize: 10,
      statementTimeoutSeconds: 30,
      idleInTransactionTimeoutSeconds: 60,
      poolWaitSeconds: 5,
      poolIdleSeconds: 300,
      queryTimeoutSeconds: 35,
    });
    expect(config.redisCommandTimeoutMs).toBe(200);
    expect(config.redisRetryAfterMs).toBe(1000);
    expect(config.mediaSweep).toEqual({ graceHours: 24, intervalHours: 6 });
    expect(config.idempotencyKeyTtlHours).toBe(24);
    expect(config.rateLimit).toEqual({
      enabled: true,
      windowSeconds: 300,
      limits: {
        read: 60,
        write: 10,
        login: 10,
        register: 5,
        refresh: 15,
        social: 10,
        staff: 600,
        map: 600,
        export: 30,
        password_reset: 5,
      },
    });
    expect(config.mail).toEqual({
      smtpUrl: null,
      from: '"Bookcase Directory" <no-reply@localhost>',
      publicBaseUrl: 'http://localhost:3000',
      dropDir: join(config.dataDir, 'mail'),
    });
    expect(config.notifications).toEqual({ pollIntervalMs: 2000 });
    expect(config.apns).toBeNull();
    expect(config.jwt).toMatchObject({ accessTtlSeconds: 300, refreshTtlSeconds: 30 * 86400 });
    expect(config.trustProxy).toBe(false);
    expect(config.redisUrl).toBeNull();
    expect(config.ai).toBeNull();
    expect(config.serviceName).toBe('Bookcase Directory');
    expect(config.openDataExport).toEqual({ intervalSeconds: 86400 });
    expect(config.contributorAgreement).toEqual({ version: null, required: false });
    expect(config.mapdb).toMatchObject({
      writeEnabled: false,
      duplicateRadiusMeters: 100,
      duplicateCheckMaxAgeSeconds: 900,
      batchMaxSpanMeters: 2000,
      batchMaxSize: 10,
      launchGates: [],
    });
  });

  it('bounds every query on the client a little beyond the statement timeout, unless told otherwise', () => {
    const base = { DATABASE_URL: 'postgres://u@h/db', JWT_SECRET: SECRET };
    const timeouts = (env: Record<string, string>) => loadConfig({ ...base, ...env }).database;
    expect(timeouts({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '10' }).queryTimeoutSeconds).toBe(15);
    expect(timeouts({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '0' }).queryTimeoutSeconds).toBe(0);
    expect(timeouts({ DATABASE_QUERY_TIMEOUT_SECONDS: '90' }).queryTimeoutSeconds).toBe(90);
    expect(timeouts({ DATABASE_QUERY_TIMEOUT_SECONDS: '0' }).queryTimeoutSeconds).toBe(0);
    expect(() =>
      timeouts({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '30', DATABASE_QUERY_TIMEOUT_SECONDS: '30' }),
    ).toThrow(
      /DATABASE_QUERY_TIMEOUT_SECONDS: must be longer than DATABASE_STATEMENT_TIMEOUT_SECONDS/,
    );
    expect(() => timeouts({ DATABASE_QUERY_TIMEOUT_SECONDS: '-1' })).toThrow(ConfigError);
  });

  it('lists every problem at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://nope',
        RATE_LIMIT_READ: '0',
        RATE_LIMIT_ENABLED: 'maybe',
        REDIS_URL: 'http://redis',
        MAPDB_LAUNCH_GATES: 'plan,unknown_gate',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of [
      'PORT',
      'DATABASE_URL',
      'RATE_LIMIT_READ',
      'RATE_LIMIT_ENABLED',
      'REDIS_URL',
      'JWT_SECRET',
      'MAPDB_LAUNCH_GATES',
    ]) {
      expect(problems).toContain(name);
    }
  });

  it('reads the open-data, contributor-agreement and map settings', () => {
    const base = { DATABASE_URL: 'postgres://u@h/db', JWT_SECRET: SECRET };
    const config = loadConfig({
      ...base,
      EXPORT_INTERVAL: '6h',
      RATE_LIMIT_EXPORT: '12',
      SERVICE_NAME: 'Book Corners',
      CONTRIBUTOR_AGREEMENT_VERSION: '2026-06',
      CONTRIBUTOR_AGREEMENT_REQUIRED: 'true',
    });
    expect(config.openDataExport).toEqual({ intervalSeconds: 6 * 3600 });
    expect(config.rateLimit.limits.export).toBe(12);
    expect(config.serviceName).toBe('Book Corners');
    expect(config.mapTextFilterMaxCandidates).toBe(5000);
    expect(
      loadConfig({ ...base, MAP_TEXT_FILTER_MAX_CANDIDATES: '20000' }).mapTextFilterMaxCandidates,
    ).toBe(20000);
    expect(() => loadConfig({ ...base, MAP_TEXT_FILTER_MAX_CANDIDATES: '0' })).toThrow(
      /MAP_TEXT_FILTER_MAX_CANDIDATES/,
    );
    expect(config.contributorAgreement).toEqual({ version: '2026-06', required: true });
    expect(
      loadConfig({ ...base, EXPORT_INTERVAL: 'off' }).openDataExport.intervalSeconds,
    ).toBeNull();
    expect(() => loadConfig({ ...base, EXPORT_INTERVAL: '30s' })).toThrow(/EXPORT_INTERVAL/);
    expect(() => loadConfig({ ...base, EXPORT_INTERVAL: 'daily' })).toThrow(/EXPORT_INTERVAL/);
    expect(() => loadConfig({ ...base, CONTRIBUTOR_AGREEMENT_REQUIRED: 'true' })).toThrow(
      /CONTRIBUTOR_AGREEMENT_VERSION: required/,
    );
    expect(() => loadConfig({ ...base, CONTRIBUTOR_AGREEMENT_VERSION: 'v 1' })).toThrow(
      /CONTRIBUTOR_AGREEMENT_VERSION/,
    );
  });

  it('requires a JWT secret of 32+ characters once a database server is configured', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db' })).toThrow(/JWT_SECRET/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db', JWT_SECRET: 'short' })).toThrow(
      /at least 32/,
    );
  });

  it('generates and keeps the embedded default JWT secret in the data folder', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bookcase-config-'));
    const first = loadConfig({ DATA_DIR: dataDir });
    const second = loadConfig({ DATA_DIR: dataDir });
    expect(first.database.url).toBeNull();
    expect(first.jwt.secret.length).toBeGreaterThanOrEqual(32);
    expect(second.jwt.secret).toBe(first.jwt.secret);
    expect(readFileSync(join(dataDir, 'jwt-secret'), 'utf8').trim()).toBe(first.jwt.secret);
    expect(statSync(join(dataDir, 'jwt-secret')).mode & 0o077).toBe(0);
  });

  it.each([
    [undefined, false],
    ['false', false],
    ['true', true],
    ['2', 2],
    ['loopback', 'loopback'],
    ['10.0.0.0/8, 192.168.1.1', '10.0.0.0/8,192.168.1.1'],
  ])('reads TRUST_PROXY=%s as %p', (value, expected) => {
    const env: Record<string, string> = { DATABASE_URL: 'postgres://u@h/db', JWT_SECRET: SECRET };
    if (value !== undefined) env.TRUST_PROXY = value;
    expect(loadConfig(env).trustProxy).toEqual(expected);
  });

  it('refuses map writes without their required settings', () => {
    expect(() =>
      loadConfig({
        DATABASE_URL: 'postgres://u@h/db',
        JWT_SECRET: SECRET,
        MAPDB_WRITE_ENABLED: 'true',
      }),
    ).toThrow(/MAPDB_API_BASE_URL[\s\S]*MAPDB_OAUTH_ACCESS_TOKEN[\s\S]*MAPDB_USER_AGENT/);
  });

  it('reads the mail and notification settings', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@h/db',
      JWT_SECRET: SECRET,
      SMTP_URL: 'smtps://user:pass@mail.example.org:465',
      MAIL_FROM: 'Bookcases <hello@example.org>',
      PUBLIC_BASE_URL: 'https://bookcases.example.org/',
      NOTIFICATIONS_POLL_INTERVAL: '500ms',
    });
    expect(config.mail).toMatchObject({
      smtpUrl: 'smtps://user:pass@mail.example.org:465',
      from: 'Bookcases <hello@example.org>',
      publicBaseUrl: 'https://bookcases.example.org',
    });
    expect(config.notifications.pollIntervalMs).toBe(500);
    const off = loadConfig({
      JWT_SECRET: SECRET,
      NOTIFICATIONS_POLL_INTERVAL: 'off',
      DATA_DIR: dir(),
    });
    expect(off.notifications.pollIntervalMs).toBeNull();
    expect(() =>
      loadConfig({
        JWT_SECRET: SECRET,
        DATA_DIR: dir(),
        SMTP_URL: 'http://mail',
        NOTIFICATIONS_POLL_INTERVAL: '5ms',
      }),
    ).toThrow(/SMTP_URL[\s\S]*NOTIFICATIONS_POLL_INTERVAL/);
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        JWT_SECRET: SECRET,
        DATA_DIR: dir(),
        SMTP_URL: 'smtp://mail',
      }),
    ).toThrow(/PUBLIC_BASE_URL: required with SMTP_URL/);
  });

  it('enables push only with all four APNs settings and a P-256 key', () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const apns = {
      APNS_KEY_ID: 'ABCDE12345',
      APNS_TEAM_ID: 'TEAM000001',
      APNS_PRIVATE_KEY: key.replace(/\n/g, '\\n'),
      APNS_TOPIC: 'org.example.app',
    };
    const config = loadConfig({ JWT_SECRET: SECRET, DATA_DIR: dir(), ...apns });
    expect(config.apns).toEqual({
      keyId: 'ABCDE12345',
      teamId: 'TEAM000001',
      privateKey: key,
      topic: 'org.example.app',
      productionUrl: 'https://api.push.apple.com',
      sandboxUrl: 'https://api.sandbox.push.apple.com',
      testCa: null,
    });
    const keyFile = join(dir(), 'AuthKey.p8');
    writeFileSync(keyFile, key);
    expect(
      loadConfig({ JWT_SECRET: SECRET, DATA_DIR: dir(), ...apns, APNS_PRIVATE_KEY: keyFile }).apns
        ?.privateKey,
    ).toBe(key);
    expect(() =>
      loadConfig({ JWT_SECRET: SECRET, DATA_DIR: dir(), APNS_KEY_ID: 'ABCDE12345' }),
    ).toThrow(
      /APNS_TEAM_ID, APNS_PRIVATE_KEY, APNS_TOPIC: required when any APNS_\* setting is set/,
    );
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    expect(() =>
      loadConfig({ JWT_SECRET: SECRET, DATA_DIR: dir(), ...apns, APNS_PRIVATE_KEY: rsa }),
    ).toThrow(/APNS_PRIVATE_KEY: must be the P-256/);
    expect(() =>
      loadConfig({
        JWT_SECRET: SECRET,
        DATA_DIR: dir(),
        ...apns,
        APNS_PRIVATE_KEY: '/no/such/key.p8',
      }),
    ).toThrow(/APNS_PRIVATE_KEY: not a readable PEM private key/);
    expect(() =>
      loadConfig({ JWT_SECRET: SECRET, DATA_DIR: dir(), ...apns, APNS_TEST_CA_FILE: keyFile }),
    ).toThrow(/APNS_TEST_CA_FILE: not a readable PEM certificate/);
  });

  it('enables AI enrichment only when base URL, key and model are all set', () => {
    const base = { DATABASE_URL: 'postgres://u@h/db', JWT_SECRET: SECRET };
    expect(
      loadConfig({ ...base, AI_API_BASE_URL: 'http://127.0.0.1:9/v1', AI_MODEL: 'm' }).ai,
    ).toBeNull();
    expect(
      loadConfig({
        ...base,
        AI_API_BASE_URL: 'http://127.0.0.1:9/v1',
        AI_MODEL: 'm',
        AI_API_KEY: 'k',
      }).ai,
    ).toEqual({
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'k',
      model: 'm',
    });
  });
});

describe('parseDuration', () => {
  it.each([
    ['300', 300],
    ['45s', 45],
    ['5m', 300],
    ['2h', 7200],
    ['30d', 2592000],
    ['1500ms', 2],
  ])('%s is %d seconds', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  describe('media storage', () => {
    const base = { DATABASE_URL: 'postgres://u@h/db', JWT_SECRET: SECRET };

    it('is the local disk by default, with no public base URL', () => {
      const config = loadConfig(base);
      expect(config.mediaStorage).toEqual({ kind: 'local' });
      expect(config.mediaPublicBaseUrl).toBeNull();
    });

    it('reads the S3 settings, with the SDK credential chain when no key is given', () => {
      const config = loadConfig({
        ...base,
        MEDIA_STORAGE: 's3',
        S3_BUCKET: 'bookcase-media',
        S3_ENDPOINT: 'http://minio:9000',
        S3_FORCE_PATH_STYLE: 'true',
        S3_PREFIX: 'prod/',
        MEDIA_PUBLIC_BASE_URL: 'https://cdn.example.org/prod/',
      });
      expect(config.mediaStorage).toEqual({
        kind: 's3',
        bucket: 'bookcase-media',
        region: 'us-east-1',
        endpoint: 'http://minio:9000',
        forcePathStyle: true,
        credentials: null,
        prefix: 'prod/',
      });
      expect(config.mediaPublicBaseUrl).toBe('https://cdn.example.org/prod');
      expect(
        loadConfig({
          ...base,
          MEDIA_STORAGE: 's3',
          S3_BUCKET: 'b-1',
          S3_ACCESS_KEY_ID: 'id',
          S3_SECRET_ACCESS_KEY: 'secret',
        }).mediaStorage,
      ).toMatchObject({ credentials: { accessKeyId: 'id', secretAccessKey: 'secret' } });
    });

    it('refuses incomplete or malformed S3 settings, naming each', () => {
      expect(() => loadConfig({ ...base, MEDIA_STORAGE: 'ftp' })).toThrow(/MEDIA_STORAGE/);
      expect(() => loadConfig({ ...base, MEDIA_STORAGE: 's3' })).toThrow(/S3_BUCKET is required/);
      expect(() => loadConfig({ ...base, MEDIA_STORAGE: 's3', S3_BUCKET: 'Bad_Bucket' })).toThrow(
        /S3_BUCKET/,
      );
      const s3 = { ...base, MEDIA_STORAGE: 's3', S3_BUCKET: 'ok-bucket' };
      expect(() => loadConfig({ ...s3, S3_ACCESS_KEY_ID: 'id' })).toThrow(/S3_SECRET_ACCESS_KEY/);
      expect(() => loadConfig({ ...s3, S3_ENDPOINT: 'minio:9000' })).toThrow(/S3_ENDPOINT/);
      expect(() => loadConfig({ ...s3, S3_PREFIX: 'no-slash' })).toThrow(/S3_PREFIX/);
      expect(() => loadConfig({ ...s3, S3_FORCE_PATH_STYLE: 'maybe' })).toThrow(
        /S3_FORCE_PATH_STYLE/,
      );
      expect(() => loadConfig({ ...base, MEDIA_PUBLIC_BASE_URL: 'cdn' })).toThrow(
        /MEDIA_PUBLIC_BASE_URL/,
      );
      expect(() =>
        loadConfig({ ...base, MEDIA_PUBLIC_BASE_URL: 'https://cdn.example.org' }),
      ).toThrow(/MEDIA_PUBLIC_BASE_URL: needs MEDIA_STORAGE=s3/);
    });
  });
});
