import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers: ParsedMail['headers'];
}

/**
 * A loopback SMTP server (smtp-server from npm) that receives the service's real messages and parses them
 * (mailparser). `failNext` answers the next messages with an SMTP error (e.g. 451: try later, 550: refused).
 */
/** A started FakeSmtpServer (for a suite's `fakes`). */
export async function startFakeSmtp(): Promise<FakeSmtpServer> {
  const smtp = new FakeSmtpServer();
  await smtp.start();
  return smtp;
}

export class FakeSmtpServer {
  readonly received: ReceivedMail[] = [];
  private readonly failures: number[] = [];
  private server: SMTPServer | null = null;
  port = 0;

  async start(): Promise<void> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const failure = this.failures.shift();
          if (failure !== undefined) {
            const error = new Error('refused by the test') as Error & { responseCode: number };
            error.responseCode = failure;
            callback(error);
            return;
          }
          simpleParser(Buffer.concat(chunks))
            .then((mail) => {
              this.received.push({
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
                subject: mail.subject ?? '',
                text: mail.text ?? '',
                html: typeof mail.html === 'string' ? mail.html : '',
                messageId: mail.messageId ?? '',
                headers: mail.headers,
              });
              callback();
            })
            .catch((error: Error) => callback(error));
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  failNext(...codes: number[]): void {
    this.failures.push(...codes);
  }

  /** The mails to one address, oldest first. */
  to(address: string): ReceivedMail[] {
    return this.received.filter((mail) => mail.to.includes(address));
  }

  clear(): void {
    this.received.length = 0;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}

/** The reset link's token in a mail's text. */
export function resetTokenOf(mail: ReceivedMail): string {
  const match = /\/reset-password\?token=([A-Za-z0-9_-]+)/.exec(mail.text);
  if (!match) throw new Error(`no reset link in: ${mail.text}`);
  return match[1];
}
