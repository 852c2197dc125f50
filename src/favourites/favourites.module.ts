import { Module } from '@nestjs/common';
import { LibrariesModule } from '../libraries/libraries.module.js';
import { FavouritesController } from './favourites.controller.js';
import { FavouritesRepository } from './favourites.repository.js';
import { FavouritesService } from './favourites.service.js';

@Module({
  imports: [LibrariesModule],
  controllers: [FavouritesController],
  providers: [FavouritesRepository, FavouritesService],
})
export class FavouritesModule {}
