import { pipeline } from 'node:stream/promises';
import type { INestApplication } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppConfig } from '../../config/app-config.js';
import { assertSafeKey, MediaStorage } from './media-storage.js';
import { S3MediaStorage, type ObjectRequest } from './s3-media-storage.js';

/** How long clients and shared caches may keep a media file (README: "Withdrawn media and caching"). */
export const MEDIA_MAX_AGE_SECONDS = 300;

function securityHeaders(res: Response): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; img-src 'self'; sandbox");
  res.setHeader('Cross-Origin-Resource-Policy', 'same-site');
}

/**
 * Serves media at /media/ with the same URLs and headers whatever the storage: files only (no listings, no dotfiles,
 * no redirects between paths), never outside the media keys, with nosniff and a locked-down CSP, cacheable for
 * MEDIA_MAX_AGE_SECONDS. Local storage: MEDIA_ROOT through serve-static. S3: the object streamed from the bucket
 * (ETag, Last-Modified, conditional and range requests answered by the bucket), or — with MEDIA_PUBLIC_BASE_URL —
 * a 302 to `<base>/<key>`. Misses fall through to the app's 404 envelope.
 */
export function serveMedia(app: INestApplication, config: AppConfig, media: MediaStorage): void {
  if (media instanceof S3MediaStorage) {
    app.use(
      '/media',
      config.mediaPublicBaseUrl
        ? redirectMedia(config.mediaPublicBaseUrl)
        : streamFromBucket(media),
    );
  } else {
    app.use(
      '/media',
      express.static(config.mediaRoot, {
        index: false,
        redirect: false,
        dotfiles: 'deny',
        fallthrough: true,
        // Short: a rejected or replaced photo is withdrawn from MEDIA_ROOT, and caches must stop showing it soon.
        maxAge: MEDIA_MAX_AGE_SECONDS * 1000,
        setHeaders: securityHeaders,
      }),
    );
  }
}

/** The media key of a request under /media, or null when it cannot be one (then the request falls through). */
function mediaKey(req: Request): string | null {
  if (req.method !== 'GET' && req.method !== 'HEAD') return null;
  let key: string;
  try {
    key = decodeURIComponent(req.path.replace(/^\//, ''));
  } catch {
    return null;
  }
  try {
    assertSafeKey(key);
  } catch {
    return null;
  }
  return key;
}

/**
 * 302 to the public copy. The redirect itself may be cached as long as the file (the key never changes content);
 * a withdrawn file disappears from the bucket's public folders, so the target answers 404 then.
 */
function redirectMedia(base: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    const key = mediaKey(req);
    if (!key) return next();
    res.setHeader('Cache-Control', `public, max-age=${MEDIA_MAX_AGE_SECONDS}`);
    res.redirect(302, `${base}/${key.split('/').map(encodeURIComponent).join('/')}`);
  };
}

function streamFromBucket(media: S3MediaStorage) {
  return (req: Request, res: Response, next: NextFunction) => {
    const key = mediaKey(req);
    if (!key) return next();
    const since = req.headers['if-modified-since'];
    const request: ObjectRequest = {
      ifNoneMatch: req.headers['if-none-match'],
      ifModifiedSince: since && !Number.isNaN(Date.parse(since)) ? new Date(since) : undefined,
      range: req.headers.range,
    };
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    media
      .get(key, request)
      .then(async (object) => {
        if (!object) return next();
        if (object.status === 416) return void res.status(416).end();
        res.status(object.status);
        res.setHeader('Cache-Control', `public, max-age=${MEDIA_MAX_AGE_SECONDS}`);
        res.setHeader('Accept-Ranges', 'bytes');
        securityHeaders(res);
        if (object.etag) res.setHeader('ETag', object.etag);
        if (object.lastModified) res.setHeader('Last-Modified', object.lastModified.toUTCString());
        if (object.status === 304 || !object.body) return void res.end();
        if (object.contentType) res.setHeader('Content-Type', object.contentType);
        if (object.contentLength !== undefined)
          res.setHeader('Content-Length', String(object.contentLength));
        if (object.contentRange) res.setHeader('Content-Range', object.contentRange);
        if (req.method === 'HEAD') {
          object.body.destroy();
          return void res.end();
        }
        await pipeline(object.body, res, { signal: abort.signal }).catch(() => undefined);
      })
      .catch((error: unknown) => next(error));
  };
}
