import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import { fileURLToPath } from 'node:url';
import { AppConfig } from '../../config/app-config.js';
import type { NotificationKind } from '../notification-kinds.js';

const TEMPLATES_DIR = fileURLToPath(new URL('./templates/', import.meta.url));

export type MailKind = Exclude<NotificationKind, 'moderation_work'>;

const SUBJECTS: Record<MailKind, (data: Record<string, unknown>) => string> = {
  password_reset: () => 'Reset your password',
  password_changed: (data) =>
    data.how === 'reset' ? 'Your password was reset' : 'Your password was changed',
  email_changed: () => 'Your email address was changed',
  library_approved: (data) => `Published: ${String(data.name)}`,
  library_rejected: (data) => `Not published: ${String(data.name)}`,
  photo_approved: (data) => `Your photo of ${String(data.name)} is online`,
  photo_rejected: (data) => `Your photo of ${String(data.name)} was not accepted`,
};

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/**
 * Plain-text and HTML bodies of every mail, from Eta templates (`templates/<kind>.txt.eta` and `.html.eta`; the HTML
 * ones inside `layout.html.eta`, auto-escaped). Subjects are short and hold no link.
 */
@Injectable()
export class MailTemplates {
  private readonly html = new Eta({ views: TEMPLATES_DIR, cache: true, autoEscape: true });
  private readonly text = new Eta({ views: TEMPLATES_DIR, cache: true, autoEscape: false });

  constructor(private readonly config: AppConfig) {}

  render(kind: MailKind, data: Record<string, unknown>): RenderedMail {
    const subject = `${SUBJECTS[kind](data)} · ${this.config.serviceName}`;
    const base = this.config.mail.publicBaseUrl;
    const context = {
      ...data,
      subject,
      serviceName: this.config.serviceName,
      baseUrl: base,
      libraryUrl:
        typeof data.slug === 'string'
          ? `${base}/api/v1/libraries/${encodeURIComponent(data.slug)}`
          : base,
    };
    return {
      subject,
      text: this.text.render(`${kind}.txt.eta`, context).trim() + '\n',
      html: this.html.render(`${kind}.html.eta`, context),
    };
  }
}
