import type { INestApplicationContext } from '@nestjs/common';

export type CliValues = Record<string, string | boolean | undefined>;

export interface CliCommand {
  usage: string;
  /** Option names this command takes; positional arguments are passed through. */
  options: Record<string, { type: 'string' | 'boolean' }>;
  /** Runs before the application starts: checks the options and gathers input (a password from stdin). */
  prepare?(values: CliValues): Promise<void>;
  run(app: INestApplicationContext, values: CliValues, positionals: string[]): Promise<string>;
}

/** A mistake in the command line: printed with the command's usage, exit code 64. */
export class UsageError extends Error {}

export function required(values: CliValues, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError(`--${name} is required`);
  return value;
}
