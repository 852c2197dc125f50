/**
 * `npm run cli -- <command> [options]`: administrative commands against the configured database (or the
 * embedded one in DATA_DIR, joining a running `npm start` when there is one).
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadConfig } from '../config/app-config.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../database/embedded-database.js';
import { CliModule } from './cli.module.js';
import { COMMANDS, UsageError } from './commands.js';

function usage(): string {
  return [
    'usage: npm run cli -- <command> [options]',
    '',
    ...Object.values(COMMANDS).map((c) => `  ${c.usage}`),
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`${name ? `unknown command: ${name}\n\n` : ''}${usage()}\n`);
    return 64;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n  ${command.usage}\n`);
    return 64;
  }

  try {
    await command.prepare?.(parsed.values);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n  ${command.usage}\n`);
    return 64;
  }

  const config = loadConfig();
  let embedded: EmbeddedDatabase | null = null;
  const databaseUrl =
    config.database.url ?? (embedded = await startEmbeddedDatabase(config.dataDir)).url;
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config, databaseUrl), {
    logger: ['error', 'warn'],
  });
  try {
    process.stdout.write(`${await command.run(app, parsed.values, parsed.positionals)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n  ${command.usage}\n`);
      return 64;
    }
    process.stderr.write(`${name} failed: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await app.close();
    await embedded?.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof ConfigError ? error.message : String((error as Error)?.stack ?? error)}\n`,
    );
    process.exit(error instanceof ConfigError ? 78 : 1);
  },
);
