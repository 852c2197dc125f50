import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { Request, Response } from 'express';

/** A stored file to send as a download, with what conditional requests need. */
export interface StoredFile {
  /** The versioned file name for Content-Disposition. */
  name: string;
  contentType: string;
  bytes: number;
  /** Hex SHA-256 of the exact bytes: the strong ETag. */
  sha256: string;
  lastModified: Date;
  open(): Promise<Readable>;
}

/**
 * Sends a stored file with a strong ETag (its SHA-256), Last-Modified and Content-Length, as an attachment named
 * `file.name`; answers 304 when the request's If-None-Match / If-Modified-Since show the client has it (Express's
 * `req.fresh`, which gives If-None-Match precedence as RFC 9110 asks). Never sets Content-Encoding: a `.gz` file is
 * itself the representation.
 */
export async function sendStoredFile(req: Request, res: Response, file: StoredFile): Promise<void> {
  res.setHeader('ETag', `"${file.sha256}"`);
  res.setHeader('Last-Modified', file.lastModified.toUTCString());
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  const stream = await file.open();
  res.status(200);
  res.attachment(file.name);
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Length', String(file.bytes));
  if (req.method === 'HEAD') {
    stream.destroy();
    res.end();
    return;
  }
  await pipeline(stream, res).catch((error: unknown) => {
    // A client that goes away mid-download is normal; anything else was already half-sent and is only logged.
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw error;
  });
}
