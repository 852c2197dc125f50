import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import { AppConfig } from '../../config/app-config.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Stable per job: a receiver that gets the same message twice (a retry after a lost answer) can tell. */
  messageId: string;
  /** Links worth printing when mail goes to files (the reset link), for a newcomer running locally. */
  links?: string[];
}

/** The SMTP server refused for good (5xx): retrying cannot help. */
export class PermanentMailError extends Error {}

/**
 * Sends mail with nodemailer: over SMTP when SMTP_URL is set, otherwise into `DATA_DIR/mail/` as one `.eml` file per
 * message (the same MIME nodemailer would send), with its links logged.
 */
@Injectable()
export class MailTransport implements OnModuleDestroy {
  private readonly logger = new Logger('Mail');
  private readonly transporter: Transporter;
  private readonly toFiles: boolean;

  constructor(private readonly config: AppConfig) {
    this.toFiles = config.mail.smtpUrl === null;
    this.transporter = this.toFiles
      ? nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
      : nodemailer.createTransport({
          url: config.mail.smtpUrl!,
          connectionTimeout: 15_000,
          greetingTimeout: 15_000,
          socketTimeout: 30_000,
        });
  }

  get mode(): 'smtp' | 'files' {
    return this.toFiles ? 'files' : 'smtp';
  }

  async send(mail: OutgoingMail): Promise<void> {
    const message = {
      from: this.config.mail.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: mail.messageId,
      headers: { 'Auto-Submitted': 'auto-generated' },
    };
    let info: { message?: unknown };
    try {
      info = await this.transporter.sendMail(message);
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode;
      if (typeof code === 'number' && code >= 500 && code < 600) {
        throw new PermanentMailError(`smtp ${code}`);
      }
      throw error;
    }
    if (!this.toFiles) return;
    const dir = this.config.mail.dropDir;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const name = `${stamp}-${mail.messageId.replace(/[^A-Za-z0-9.-]/g, '_')}.eml`;
    await writeFile(join(dir, name), info.message as Buffer, { mode: 0o600 });
    this.logger.log(
      `mail "${mail.subject}" written to ${join(dir, name)}${mail.links?.length ? `; links: ${mail.links.join(' ')}` : ''}`,
    );
  }

  onModuleDestroy(): void {
    this.transporter.close();
  }
}
