import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

const ANSWERS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request header fields too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request timeout.'],
  HPE_URI_TOO_LONG: [414, 'URI Too Long', 'Request URI too long.'],
};
const BAD_REQUEST: [number, string, string] = [400, 'Bad Request', 'Bad request.'];

/**
 * Requests Node's HTTP parser rejects (oversized headers, malformed or smuggling-shaped framing) never reach
 * Express; Node's default answer has no body. This one answers with the JSON envelope when the socket can still
 * be written to (and nothing was sent on it yet), then closes the connection.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const sent = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || sent?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, reason, message] = ANSWERS[error.code ?? ''] ?? BAD_REQUEST;
    const body = JSON.stringify({ message, details: null });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: private, no-store\r\n' +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
