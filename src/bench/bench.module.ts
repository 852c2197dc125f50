import { Module } from '@nestjs/common';
import { LibrariesModule } from '../libraries/libraries.module.js';
import { BenchController } from './bench.controller.js';

/** `/api/v1/bench/…` (ceiling, memo, capture), imported by AppModule only when BENCH_CEILING_ROUTE=true. */
@Module({ imports: [LibrariesModule], controllers: [BenchController] })
export class BenchModule {}
