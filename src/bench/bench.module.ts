import { Module } from '@nestjs/common';
import { BenchController } from './bench.controller.js';

/** `GET /api/v1/bench/ceiling`, imported by AppModule only when BENCH_CEILING_ROUTE=true. */
@Module({ controllers: [BenchController] })
export class BenchModule {}
