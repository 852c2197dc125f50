import type { INestApplication } from '@nestjs/common';
import express from 'express';

/** How long clients and shared caches may keep a media file (README: "Withdrawn media and caching"). */
export const MEDIA_MAX_AGE_SECONDS = 300;

/**
 * Serves MEDIA_ROOT at /media/: files only (no listings, no dotfiles, no redirects), never outside the root
 * (serve-static resolves and refuses traversal), with nosniff and a locked-down CSP. Misses fall through to the
 * app's 404 envelope.
 */
export function serveMedia(app: INestApplication, mediaRoot: string): void {
  app.use(
    '/media',
    express.static(mediaRoot, {
      index: false,
      redirect: false,
      dotfiles: 'deny',
      fallthrough: true,
      // Short: a rejected or replaced photo is withdrawn from MEDIA_ROOT, and caches must stop showing it soon.
      maxAge: MEDIA_MAX_AGE_SECONDS * 1000,
      setHeaders: (res) => {
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('Content-Security-Policy', "default-src 'none'; img-src 'self'; sandbox");
        res.setHeader('Cross-Origin-Resource-Policy', 'same-site');
      },
    }),
  );
}
