import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { rootCertificates } from 'node:tls';
import { importPKCS8, SignJWT, type CryptoKey } from 'jose';
import { Clock } from '../../common/clock.js';
import { AppConfig, type ApnsConfig } from '../../config/app-config.js';
import type { DeviceEnvironment } from '../../auth/device-token.row.js';

export interface ApnsNotification {
  /** The JSON body: `aps` plus our own keys (never contact data). */
  payload: Record<string, unknown>;
  /** UUID of this message (`apns-id`): the same on every retry of one job. */
  id: string;
  /** Notifications with the same collapse id replace each other on the device (≤ 64 bytes). */
  collapseId?: string;
  /** Unix seconds after which APNs stops trying to deliver; 0: once only. */
  expiration: number;
}

/** What to do with the job after one exchange with APNs. */
export type ApnsOutcome =
  | { result: 'sent' }
  | { result: 'dead_token'; reason: string }
  | { result: 'retry'; reason: string }
  | { result: 'rejected'; reason: string };

/** An APNs provider token is valid for an hour and may not be renewed more than every 20 minutes. */
const TOKEN_MAX_AGE_SECONDS = 40 * 60;

/**
 * The APNs provider API over HTTP/2 with token-based authentication: an ES256 JWT (`kid` = key id, `iss` = team id,
 * `iat`) made from the .p8 key, reused for 40 minutes. One HTTP/2 session per host (production or sandbox, by each
 * device's `environment`), kept open and re-made when it closes.
 */
@Injectable()
export class ApnsClient implements OnModuleDestroy {
  private readonly logger = new Logger('Apns');
  private readonly sessions = new Map<string, ClientHttp2Session>();
  private key: Promise<CryptoKey> | null = null;
  private token: { jwt: string; issuedAt: number } | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  get configured(): boolean {
    return this.config.apns !== null;
  }

  async send(
    device: { token: string; environment: DeviceEnvironment },
    notification: ApnsNotification,
    timeoutMs: number,
  ): Promise<ApnsOutcome> {
    const apns = this.config.apns;
    if (!apns) return { result: 'rejected', reason: 'apns_not_configured' };
    const url = device.environment === 'production' ? apns.productionUrl : apns.sandboxUrl;
    let answer: { status: number; reason: string };
    try {
      answer = await this.post(apns, url, device.token, notification, timeoutMs);
    } catch (error) {
      return { result: 'retry', reason: `network: ${(error as Error).message}`.slice(0, 150) };
    }
    const { status, reason } = answer;
    if (status === 200) return { result: 'sent' };
    if (status === 410 || (status === 400 && reason === 'BadDeviceToken')) {
      return { result: 'dead_token', reason: `${status} ${reason}` };
    }
    if (status === 400 && reason === 'DeviceTokenNotForTopic') {
      return { result: 'dead_token', reason: `${status} ${reason}` };
    }
    if (
      status === 403 &&
      (reason === 'ExpiredProviderToken' || reason === 'InvalidProviderToken')
    ) {
      this.token = null; // a new provider token for the next try
      return { result: 'retry', reason: `${status} ${reason}` };
    }
    if (status === 429 || status >= 500) return { result: 'retry', reason: `${status} ${reason}` };
    return { result: 'rejected', reason: `${status} ${reason}` };
  }

  private async post(
    apns: ApnsConfig,
    url: string,
    deviceToken: string,
    notification: ApnsNotification,
    timeoutMs: number,
  ): Promise<{ status: number; reason: string }> {
    const jwt = await this.providerToken(apns);
    const session = this.session(apns, url);
    const body = JSON.stringify(notification.payload);
    const headers: Record<string, string> = {
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: `/3/device/${encodeURIComponent(deviceToken)}`,
      authorization: `bearer ${jwt}`,
      'apns-topic': apns.topic,
      'apns-push-type': 'alert',
      'apns-priority': '10',
      'apns-id': notification.id,
      'apns-expiration': String(notification.expiration),
      'content-type': 'application/json',
    };
    if (notification.collapseId) headers['apns-collapse-id'] = notification.collapseId;
    return new Promise((resolve, reject) => {
      const request = session.request(headers);
      let status = 0;
      const chunks: Buffer[] = [];
      request.setTimeout(timeoutMs, () => {
        request.close(constants.NGHTTP2_CANCEL);
        reject(new Error('timeout'));
      });
      request.on('response', (responseHeaders) => {
        status = Number(responseHeaders[constants.HTTP2_HEADER_STATUS]);
      });
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        let reason = '';
        if (chunks.length) {
          try {
            const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              reason?: unknown;
            };
            reason = typeof answer.reason === 'string' ? answer.reason : '';
          } catch {
            reason = 'unreadable answer';
          }
        }
        resolve({ status, reason });
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  private session(apns: ApnsConfig, url: string): ClientHttp2Session {
    const existing = this.sessions.get(url);
    if (existing && !existing.closed && !existing.destroyed) return existing;
    const session = connect(url, {
      ...(apns.testCa ? { ca: [...rootCertificates, apns.testCa] } : {}),
    });
    session.on('error', (error: Error) => {
      this.logger.warn(`APNs connection to ${url} failed: ${error.message}`);
    });
    session.on('close', () => {
      if (this.sessions.get(url) === session) this.sessions.delete(url);
    });
    session.on('goaway', () => {
      if (this.sessions.get(url) === session) this.sessions.delete(url);
    });
    session.unref();
    this.sessions.set(url, session);
    return session;
  }

  private async providerToken(apns: ApnsConfig): Promise<string> {
    const now = Math.floor(this.clock.now() / 1000);
    if (
      this.token &&
      now - this.token.issuedAt < TOKEN_MAX_AGE_SECONDS &&
      now >= this.token.issuedAt
    ) {
      return this.token.jwt;
    }
    this.key ??= importPKCS8(apns.privateKey, 'ES256');
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: apns.keyId })
      .setIssuer(apns.teamId)
      .setIssuedAt(now)
      .sign(await this.key);
    this.token = { jwt, issuedAt: now };
    return jwt;
  }

  onModuleDestroy(): void {
    for (const session of this.sessions.values()) session.close();
    this.sessions.clear();
  }
}
