/**
 * The contract check of every e2e suite: each test app (createTestApp) records every response it sends, and the
 * responses are validated against the served OpenAPI document (test/support/openapi-validator.ts). A response the
 * document does not describe (undocumented status, field or header value, a value outside its schema) fails the test
 * that received it, from an afterEach hook; one received in a beforeAll fails the file's first test (or afterAll).
 */
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { OpenApiResponseValidator } from './openapi-validator.js';

let validator: OpenApiResponseValidator | null = null;
const problems: string[] = [];

function documentValidator(): OpenApiResponseValidator {
  const path = process.env.TEST_OPENAPI_DOCUMENT;
  if (!path) throw new Error('e2e global setup did not write the OpenAPI document');
  validator ??= OpenApiResponseValidator.fromFile(path);
  return validator;
}

/** Problems recorded since the last call, cleared. */
export function takeContractProblems(): string[] {
  return problems.splice(0, problems.length);
}

function failOnProblems(): void {
  const found = takeContractProblems();
  if (found.length)
    throw new Error(
      `Responses that the OpenAPI document does not describe:\n${[...new Set(found)].join('\n')}`,
    );
}

let hooked = false;
function hookIntoJest(): void {
  if (hooked || typeof afterEach !== 'function') return;
  hooked = true;
  afterEach(failOnProblems);
  afterAll(failOnProblems);
}
hookIntoJest();

/** Records every response of `app` (registered before any other middleware) and queues what the document rejects. */
export function checkResponsesAgainstDocument(app: NestExpressApplication): void {
  const check = documentValidator();
  app.use((req: Request, res: Response, next: NextFunction) => {
    const chunks: Buffer[] = [];
    const collect = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      chunks.push(
        Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(
              chunk as string,
              typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8',
            ),
      );
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.write = ((...args: unknown[]) => {
      collect(args[0], args[1]);
      return write(...args);
    }) as Response['write'];
    res.end = ((...args: unknown[]) => {
      collect(args[0], args[1]);
      return end(...args);
    }) as Response['end'];
    res.on('finish', () => {
      const found = check.problems({
        method: req.method,
        url: req.originalUrl,
        status: res.statusCode,
        headers: res.getHeaders(),
        body: Buffer.concat(chunks),
      });
      for (const problem of found) problems.push(`${req.method} ${req.originalUrl} → ${problem}`);
    });
    next();
  });
}
