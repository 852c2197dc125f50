import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import password from '@inquirer/password';

/**
 * A secret for a command, never from argv (visible in `ps`, shell history and npm's command banner): on a terminal
 * a prompt that echoes nothing, otherwise the first line of standard input (`printf '%s\n' "$PW" | …`).
 */
export async function readSecret(
  message: string,
  input: Readable & { isTTY?: boolean } = process.stdin,
): Promise<string> {
  if (input.isTTY) return password({ message, mask: false }, { output: process.stderr });
  const lines = createInterface({ input, terminal: false, crlfDelay: Infinity });
  try {
    for await (const line of lines) return line;
    return '';
  } finally {
    lines.close();
  }
}
