/** Shared by the error filter's specs; not part of the build. */
import type { ArgumentsHost } from '@nestjs/common';
import { AllExceptionsFilter } from './all-exceptions.filter.js';

/**
 * Runs the one error filter on `error` for `request`, with a response that records what is sent: the status, the
 * body and the headers. The 500 path's log line (with its stack) is kept out of the test output.
 */
export function filterAnswer(
  error: unknown,
  request: { method: string; path: string } = { method: 'GET', path: '/api/v1/test' },
): { status?: number; body?: unknown; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  const sent: { status?: number; body?: unknown } = {};
  const response = {
    headersSent: false,
    setHeader: (name: string, value: string) => (headers[name] = value),
    hasHeader: (name: string) => name in headers,
    status(code: number) {
      sent.status = code;
      return this;
    },
    json(body: unknown) {
      sent.body = body;
      return this;
    },
  };
  const host = {
    switchToHttp: () => ({ getResponse: () => response, getRequest: () => request }),
  } as unknown as ArgumentsHost;
  const filter = new AllExceptionsFilter();
  (filter as unknown as { logger: { error: () => void } }).logger = { error: () => undefined };
  filter.catch(error, host);
  return { ...sent, headers };
}
