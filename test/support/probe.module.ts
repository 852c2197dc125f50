import { Body, Controller, Get, Logger, Module, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { DataSource } from 'typeorm';
import { Public } from '../../src/common/auth/public.decorator.js';
import { PaginationQueryDto, paginate } from '../../src/common/pagination/pagination.js';
import { RateLimit } from '../../src/common/rate-limit/rate-limit.decorator.js';
import { PublicCache } from '../../src/common/http/cache-control.js';
import { ToInt } from '../../src/common/validation/transforms.js';

class ProbeQueryDto extends PaginationQueryDto {
  @IsOptional()
  @ToInt()
  @IsInt()
  @Min(0)
  @Max(10)
  level?: number;
}

class ProbeChildDto {
  @IsString()
  @MaxLength(3)
  code: string;
}

class ProbeBodyDto {
  @IsString()
  @MaxLength(5)
  name: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => ProbeChildDto)
  child?: ProbeChildDto;
}

class ProbeParamsDto {
  @ToInt()
  @IsInt()
  @Min(1)
  id: number;
}

/** Routes that exist only in tests, to drive the platform's error, validation and pagination paths. */
@Public()
@Controller('probe')
class ProbeController {
  constructor(private readonly dataSource: DataSource) {}

  @Get('items')
  @RateLimit('read')
  @ApiOkResponse()
  items(@Query() query: ProbeQueryDto) {
    const all = Array.from({ length: 45 }, (_, index) => index + 1);
    return paginate(
      query,
      async () => all.length,
      async (limit, offset) => all.slice(offset, offset + limit),
    );
  }

  @Get('cached')
  @RateLimit('read')
  @PublicCache(120)
  @ApiOkResponse()
  cached() {
    return { cached: true };
  }

  @Post('echo')
  @RateLimit('write')
  @ApiOkResponse()
  echo(@Body() body: ProbeBodyDto) {
    return body;
  }

  @Get('things/:id')
  @RateLimit('read')
  @ApiOkResponse()
  thing(@Param() params: ProbeParamsDto) {
    return { id: params.id };
  }

  @Get('boom')
  @RateLimit('read')
  @ApiOkResponse()
  boom(): never {
    throw new Error('secret internal detail: password=hunter2');
  }

  @Post('duplicate')
  @RateLimit('write')
  @ApiOkResponse()
  async duplicate() {
    await this.dataSource.query(
      "INSERT INTO users (username, email) VALUES ('dup', 'dup@example.com')",
    );
    await this.dataSource.query(
      "INSERT INTO users (username, email) VALUES ('DUP', 'other@example.com')",
    );
    return {};
  }

  /** Logs after a database round trip and after a macrotask hop: both lines must carry the request's id. */
  @Get('logged')
  @RateLimit('read')
  @ApiOkResponse()
  async logged() {
    const logger = new Logger('Probe');
    await this.dataSource.query('SELECT 1');
    logger.warn('after a database round trip');
    await new Promise<void>((resolve) => setImmediate(resolve));
    logger.log('after a macrotask hop');
    return {};
  }

  @Get('bad-sql')
  @RateLimit('read')
  @ApiOkResponse()
  async badSql() {
    await this.dataSource.query('SELECT * FROM table_that_does_not_exist');
    return {};
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
