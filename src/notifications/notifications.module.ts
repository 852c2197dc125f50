import { Module } from '@nestjs/common';
import { MailTemplates } from './mail/mail-templates.js';
import { MailTransport } from './mail/mail-transport.js';
import { NotificationJobsRepository } from './notification-jobs.repository.js';
import { NotificationQueue } from './notification.queue.js';
import { DEFAULT_NOTIFICATIONS_OPTIONS, NOTIFICATIONS_OPTIONS } from './notifications.options.js';
import { NotificationsWorker } from './notifications.worker.js';
import { ApnsClient } from './push/apns.client.js';

/** Outbound email and push: the durable queue, its worker, SMTP and the APNs provider API (issue 20). */
@Module({
  providers: [
    { provide: NOTIFICATIONS_OPTIONS, useValue: DEFAULT_NOTIFICATIONS_OPTIONS },
    NotificationJobsRepository,
    NotificationQueue,
    NotificationsWorker,
    MailTemplates,
    MailTransport,
    ApnsClient,
  ],
  exports: [NotificationQueue, NotificationsWorker, NOTIFICATIONS_OPTIONS],
})
export class NotificationsModule {}
