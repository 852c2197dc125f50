import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAiRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * What the fake answers to one request:
 * - `content`: a well-formed chat completion whose `choices[0].message.content` is this string;
 * - `status` + `raw`: that status and body verbatim;
 * - `hang`: never answers (until the server closes);
 * - `hold`: answers with `then` only once `release()` is called.
 */
export type FakeAiReply =
  | { content: string }
  | { status: number; raw: string }
  | { hang: true }
  | { hold: true; then: FakeAiReply };

const NO_REPLY: FakeAiReply = { status: 500, raw: '{"error":"no reply scripted"}' };

/** A loopback OpenAI-compatible chat API that records requests and answers as scripted, in order. */
export class FakeAiServer {
  readonly requests: FakeAiRequest[] = [];
  private readonly script: FakeAiReply[] = [];
  private readonly held: (() => void)[] = [];
  private readonly waiters: (() => void)[] = [];
  private fallback: FakeAiReply = NO_REPLY;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeAiServer> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () =>
        fake.handle(req.method ?? '', req.url ?? '', req.headers, Buffer.concat(chunks), res),
      );
    });
    const fake = new FakeAiServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** `http://127.0.0.1:<port>/v1`, the AI_API_BASE_URL to configure. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Queues replies for the next requests, in order. */
  reply(...replies: FakeAiReply[]): this {
    this.script.push(...replies);
    return this;
  }

  /** The reply once the script is used up. */
  otherwise(reply: FakeAiReply): this {
    this.fallback = reply;
    return this;
  }

  /** Lets every held request answer. */
  release(): void {
    this.held.splice(0).forEach((go) => go());
  }

  /** Resolves once `count` requests have arrived in total (the only waiting these tests do). */
  async waitForRequests(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new Error(`fake AI saw ${this.requests.length} of ${count} requests`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /**
   * A fresh fake on the same port for the next test: the requests, the script and the fallback forgotten, and the
   * connections of held and hanging requests dropped (never answered).
   */
  reset(): void {
    this.held.splice(0);
    this.server.closeAllConnections();
    this.requests.splice(0);
    this.script.splice(0);
    this.fallback = NO_REPLY;
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    raw: Buffer,
    res: ServerResponse,
  ): void {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = raw.toString('utf8');
    }
    this.requests.push({ method, path, headers, body });
    this.waiters.splice(0).forEach((wake) => wake());
    this.answer(this.script.shift() ?? this.fallback, res);
  }

  private answer(reply: FakeAiReply, res: ServerResponse): void {
    if ('hang' in reply) return;
    if ('hold' in reply) {
      this.held.push(() => this.answer(reply.then, res));
      return;
    }
    if ('content' in reply) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(completion(reply.content)));
      return;
    }
    res.writeHead(reply.status, { 'Content-Type': 'application/json' });
    res.end(reply.raw);
  }
}

function completion(content: string) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_781_000_000,
    model: 'test-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
  };
}

/** A well-formed model answer. */
export function aiJson(name: string, description: string): { content: string } {
  return { content: JSON.stringify({ name, description }) };
}
