import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';

export interface IdentityTokenOptions {
  /** The kid header; null leaves it out. Default: the served key's kid. */
  kid?: string | null;
  /** Sign with a key the JWKS does not serve (a bad signature under the served kid). */
  foreignKey?: boolean;
  /** Seconds since the epoch; default: `now` given to the fake. */
  iat?: number;
  exp?: number;
}

export interface FakeJwks {
  /** The JWKS document's URL on loopback. */
  url: string;
  kid: string;
  /** Requests the JWKS endpoint answered. */
  requests: number;
  /** A signed RS256 id token with these claims (iss/aud/sub/jti as given). */
  sign(claims: JWTPayload, options?: IdentityTokenOptions): Promise<string>;
  close(): Promise<void>;
}

/**
 * An identity provider's JWKS endpoint on 127.0.0.1 with a freshly generated RS256 key, and a signer for id tokens.
 * `now()` gives the token times (the app's FakeClock, usually).
 */
export async function startFakeJwks(
  now: () => number,
  kid = `kid-${Math.random().toString(36).slice(2)}`,
): Promise<FakeJwks> {
  const served = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(served.publicKey)), kid, alg: 'RS256', use: 'sig' };
  const body = JSON.stringify({ keys: [jwk] });

  const fake = { requests: 0 } as FakeJwks;
  const server: Server = createServer((req, res) => {
    fake.requests += 1;
    if (req.url !== '/keys') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  fake.url = `http://127.0.0.1:${port}/keys`;
  fake.kid = kid;
  fake.sign = async (claims, options = {}) => {
    const nowSeconds = Math.floor(now() / 1000);
    const key: CryptoKey = options.foreignKey ? foreign.privateKey : served.privateKey;
    const header =
      options.kid === null ? { alg: 'RS256' } : { alg: 'RS256', kid: options.kid ?? kid };
    return new SignJWT(claims)
      .setProtectedHeader(header)
      .setIssuedAt(options.iat ?? nowSeconds)
      .setExpirationTime(options.exp ?? nowSeconds + 600)
      .sign(key);
  };
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}

/** A loopback URL nobody listens on (the port was just freed). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/keys`;
}
