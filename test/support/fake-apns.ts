import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import {
  createSecureServer,
  type Http2SecureServer,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { generate } from 'selfsigned';

export const APNS_KEY_ID = 'KEY1234567';
export const APNS_TEAM_ID = 'TEAM123456';
export const APNS_TOPIC = 'org.example.bookcase';

export interface ApnsRequest {
  /** `localhost:<port>` (sandbox in the tests) or `127.0.0.1:<port>` (production). */
  authority: string;
  deviceToken: string;
  headers: Record<string, string>;
  payload: Record<string, unknown>;
  /** What the double found wrong with the request (JWT, topic, headers); [] when it is right. */
  problems: string[];
}

interface Scripted {
  status: number;
  reason?: string;
}

/**
 * A stand-in for the APNs provider API: an HTTP/2 TLS server on loopback with a self-signed certificate made at
 * test time (trusted by the app through APNS_TEST_CA_FILE). It checks each request as APNs would (ES256 provider
 * token signed by the key whose public half it holds, `kid`, `iss`, fresh `iat`; topic; push type; JSON body) and
 * answers 200 unless a test scripted other answers for a device token. `hold()` keeps answers back until released.
 */
export class FakeApnsServer {
  readonly requests: ApnsRequest[] = [];
  private readonly scripted = new Map<string, Scripted[]>();
  private server: Http2SecureServer | null = null;
  private readonly dir = mkdtempSync(join(tmpdir(), 'fake-apns-'));
  private publicKey: KeyObject | null = null;
  private held: (() => void)[] | null = null;
  private readonly sessions = new Set<ServerHttp2Session>();
  private arrivals: (() => void)[] = [];
  privateKeyPem = '';
  caFile = '';
  port = 0;
  /** The time the double takes as "now" for the token's `iat` (the app's fake clock). */
  now: () => number = () => Date.now();

  async start(): Promise<void> {
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKeyPem = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    this.publicKey = keys.publicKey;
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate: new Date(Date.now() - 3600_000),
      notAfterDate: new Date(Date.now() + 7 * 86_400_000),
      extensions: [
        { name: 'basicConstraints', cA: true },
        { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    });
    this.caFile = join(this.dir, 'ca.pem');
    writeFileSync(this.caFile, pems.cert);
    this.server = createSecureServer({ key: pems.private, cert: pems.cert, allowHTTP1: false });
    this.server.on('stream', (stream, headers) => this.handle(stream, headers));
    this.server.on('session', (session) => this.sessions.add(session));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** The app's settings for this double: sandbox devices go to `localhost`, production to `127.0.0.1`. */
  env(): Record<string, string> {
    return {
      APNS_KEY_ID,
      APNS_TEAM_ID,
      APNS_PRIVATE_KEY: this.privateKeyPem.replace(/\n/g, '\\n'),
      APNS_TOPIC,
      APNS_SANDBOX_URL: `https://localhost:${this.port}`,
      APNS_PRODUCTION_URL: `https://127.0.0.1:${this.port}`,
      APNS_TEST_CA_FILE: this.caFile,
    };
  }

  /** The next answers for a device token, in order (then 200 again). */
  script(deviceToken: string, ...answers: Scripted[]): void {
    this.scripted.set(deviceToken, [...(this.scripted.get(deviceToken) ?? []), ...answers]);
  }

  /** Answers wait until `release()`. */
  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const answer of held) answer();
  }

  /** Resolves once `count` requests have arrived in all. */
  async arrived(count: number): Promise<void> {
    while (this.requests.length < count) {
      await new Promise<void>((resolve) => this.arrivals.push(resolve));
    }
  }

  to(deviceToken: string): ApnsRequest[] {
    return this.requests.filter((request) => request.deviceToken === deviceToken);
  }

  clear(): void {
    this.requests.length = 0;
  }

  private handle(
    stream: ServerHttp2Stream,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      void this.check(headers, Buffer.concat(chunks)).then((request) => {
        this.requests.push(request);
        for (const notify of this.arrivals.splice(0)) notify();
        const answer = (): void => {
          if (stream.closed || stream.destroyed) return;
          const scripted = request.problems.length
            ? { status: 403, reason: 'InvalidProviderToken' }
            : (this.scripted.get(request.deviceToken)?.shift() ?? { status: 200 });
          stream.respond({
            ':status': scripted.status,
            'apns-id': request.headers['apns-id'] ?? '',
          });
          stream.end(
            scripted.status === 200 ? undefined : JSON.stringify({ reason: scripted.reason ?? '' }),
          );
        };
        if (this.held) this.held.push(answer);
        else answer();
      });
    });
  }

  private async check(
    raw: Record<string, string | string[] | undefined>,
    body: Buffer,
  ): Promise<ApnsRequest> {
    const headers = Object.fromEntries(
      Object.entries(raw).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(',') : String(value),
      ]),
    );
    const problems: string[] = [];
    const path = headers[':path'] ?? '';
    const match = /^\/3\/device\/([0-9a-fA-F]+)$/.exec(path);
    if (headers[':method'] !== 'POST') problems.push(`method ${headers[':method']}`);
    if (!match) problems.push(`path ${path}`);
    if (headers['apns-topic'] !== APNS_TOPIC) problems.push(`topic ${headers['apns-topic']}`);
    if (headers['apns-push-type'] !== 'alert')
      problems.push(`push type ${headers['apns-push-type']}`);
    if (!/^[0-9a-f-]{36}$/.test(headers['apns-id'] ?? '')) problems.push('apns-id');
    const auth = headers.authorization ?? '';
    if (!auth.startsWith('bearer ')) problems.push('authorization scheme');
    const jwt = auth.slice('bearer '.length);
    try {
      const header = decodeProtectedHeader(jwt);
      if (header.alg !== 'ES256') problems.push(`alg ${header.alg}`);
      if (header.kid !== APNS_KEY_ID) problems.push(`kid ${header.kid}`);
      const { payload } = await jwtVerify(jwt, this.publicKey!, {
        algorithms: ['ES256'],
        issuer: APNS_TEAM_ID,
        currentDate: new Date(this.now()),
      });
      const iat = Number(payload.iat);
      const age = this.now() / 1000 - iat;
      if (!(age >= -60 && age < 3600)) problems.push(`iat ${iat} is ${age} s old`);
    } catch (error) {
      problems.push(`jwt: ${(error as Error).message}`);
    }
    let payload: Record<string, unknown> = {};
    try {
      payload = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      if (typeof payload.aps !== 'object') problems.push('no aps');
    } catch {
      problems.push('body is not JSON');
    }
    if (body.length > 4096) problems.push('payload over 4 KB');
    return {
      authority: headers[':authority'] ?? '',
      deviceToken: match?.[1] ?? '',
      headers,
      payload,
      problems,
    };
  }

  async stop(): Promise<void> {
    this.release();
    for (const session of this.sessions) session.destroy();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}
