import type { NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import { fileURLToPath } from 'node:url';

const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));

/** The console's stylesheet and script (the CSP allows no inline ones), served from /admin/assets. */
export function serveConsoleAssets(app: NestExpressApplication): void {
  app.use(
    '/admin/assets',
    express.static(ASSETS_DIR, {
      index: false,
      dotfiles: 'deny',
      fallthrough: true,
      maxAge: '1h',
      setHeaders: (res) => {
        res.setHeader('X-Content-Type-Options', 'nosniff');
      },
    }),
  );
}
