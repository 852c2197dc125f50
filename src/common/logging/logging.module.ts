import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import {
  Logger as NestPinoLogger,
  LoggerModule,
  PARAMS_PROVIDER_TOKEN,
  PinoLogger,
  type Params,
} from 'nestjs-pino';
import { pino, type DestinationStream, type Logger } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { AppConfig } from '../../config/app-config.js';

/** The app's root pino logger (its level and destination); request lines are children of it. */
export const PINO = Symbol('PINO');
export const REQUEST_ID_HEADER = 'x-request-id';
const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Removed from every log line: credentials never reach the logs. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.current_password',
  '*.new_password',
  '*.new_password_confirm',
  '*.refresh',
  '*.access',
  '*.id_token',
  '*.token',
  '*.authorization',
];

/** Nest's start-up chatter (one line per module and per route): logged at debug, not info. */
const START_UP_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

export function requestIdFor(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  const id =
    typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}

/**
 * One JSON line per request: id, method, path (no query string), client address, status, time. It also gives every
 * request `req.log`, a child logger carrying the request (its id included), which nestjs-pino then binds to the
 * request's async context (`useExisting`), so every line written while the request runs carries its id.
 *
 * It is mounted with `app.use` ahead of everything (media and the console's assets included), once per app: the
 * middleware nestjs-pino would build itself is one per process, shared by every app the process creates.
 */
export function requestLogger(logger: Logger): HttpLogger {
  return pinoHttp({
    logger,
    genReqId: requestIdFor,
    serializers: {
      req: (req: { id: string; method: string; url: string; remoteAddress?: string }) => ({
        id: req.id,
        method: req.method,
        path: req.url.split('?')[0],
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}

/**
 * nestjs-pino's PinoLogger, but outside a request it writes through this app's root logger rather than the
 * process-wide one nestjs-pino keeps (the first app's, in a test file that starts several apps).
 */
class AppPinoLogger extends PinoLogger {
  private readonly processRoot: Logger;

  constructor(
    params: Params,
    private readonly appRoot: Logger,
  ) {
    super(params);
    this.processRoot = super.logger; // built outside any request: the process-wide root
  }

  override get logger(): Logger {
    const bound = super.logger;
    return bound === this.processRoot ? this.appRoot : bound;
  }
}

/**
 * Nest's logger (`new Logger(context)` everywhere, and Nest's own lines) on nestjs-pino: inside a request each line
 * is written by the request's logger, so it carries the request id. Start-up chatter goes to debug; the
 * `(message, stack, context)` form of `error` keeps its stack.
 */
export class AppLogger extends NestPinoLogger {
  override log(message: unknown, ...params: unknown[]): void {
    if (START_UP_CONTEXTS.has(params.at(-1) as string)) super.debug(message, ...params);
    else super.log(message, ...params);
  }

  override error(message: unknown, ...params: unknown[]): void {
    if (typeof message === 'string' && params.length === 2 && typeof params[0] === 'string') {
      super.error({ msg: message, stack: params[0] }, params[1]);
    } else {
      super.error(message, ...params);
    }
  }
}

/** Holds PINO, so nestjs-pino's module and the app see one logger per app. */
@Module({})
class PinoRootModule {}

@Global()
@Module({})
export class LoggingModule {
  static forRoot(destination?: DestinationStream): DynamicModule {
    const root: DynamicModule = {
      module: PinoRootModule,
      providers: [
        {
          provide: PINO,
          inject: [AppConfig],
          useFactory: (config: AppConfig) => createLogger(config.logLevel, destination),
        },
      ],
      exports: [PINO],
    };
    return {
      module: LoggingModule,
      imports: [
        root,
        LoggerModule.forRootAsync({
          imports: [root],
          inject: [PINO],
          useFactory: (logger: Logger): Params => ({
            pinoHttp: { logger },
            useExisting: true,
          }),
        }),
      ],
      providers: [
        {
          provide: AppLogger,
          inject: [PARAMS_PROVIDER_TOKEN, PINO],
          useFactory: (params: Params, logger: Logger) =>
            new AppLogger(new AppPinoLogger(params, logger), params),
        },
      ],
      exports: [root, AppLogger],
    };
  }
}
