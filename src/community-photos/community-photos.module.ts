import { Module } from '@nestjs/common';
import { CommunityPhotosController } from './community-photos.controller.js';
import { CommunityPhotosRepository } from './community-photos.repository.js';
import { CommunityPhotosService } from './community-photos.service.js';

@Module({
  controllers: [CommunityPhotosController],
  providers: [CommunityPhotosRepository, CommunityPhotosService],
  exports: [CommunityPhotosRepository],
})
export class CommunityPhotosModule {}
