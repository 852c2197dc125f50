import { NotificationsModule } from '../notifications/notifications.module.js';
import { Module } from '@nestjs/common';
import { LibrariesModule } from '../libraries/libraries.module.js';
import { CommunityPhotosController } from './community-photos.controller.js';
import { CommunityPhotosRepository } from './community-photos.repository.js';
import { CommunityPhotosService } from './community-photos.service.js';

@Module({
  imports: [LibrariesModule, NotificationsModule],
  controllers: [CommunityPhotosController],
  providers: [CommunityPhotosRepository, CommunityPhotosService],
  exports: [CommunityPhotosRepository],
})
export class CommunityPhotosModule {}
