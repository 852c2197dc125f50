/**
 * The public map at `/` in Chromium with software WebGL (SwiftShader), against the real app on a loopback port: it
 * loads without console errors or CSP violations, draws the vector tiles (every tile request answered 200 or 204),
 * shows a cluster labelled with its count that zooms in when clicked, opens a library's popup with its name, and
 * still draws the bookcases when the configured base map is unreachable. Screenshots at 375 and 1280 px.
 */
import type { Page } from 'playwright-core';
import request from 'supertest';
import type { TestApp } from '../support/app.js';
import {
  checkPage,
  DESKTOP,
  describeWithBrowser,
  PHONE,
  serve,
  type Viewport,
  useBrowser,
} from '../support/browser.js';
import { insertLibraries, type LibraryFixture } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const BERLIN_KNOT = 30;
const PARIS = { lng: 2.3522, lat: 48.8566, name: 'Boîte à livres du Marais' };

// The page's globals, as the functions evaluated in the browser see them (no DOM library in this project).
interface BrowserMap {
  getZoom(): number;
  loaded(): boolean;
  project(lngLat: [number, number]): { x: number; y: number };
  jumpTo(options: { center: [number, number]; zoom: number }): void;
  once(event: string, listener: () => void): void;
}
declare const window: { bookcaseMap?: BrowserMap };

describeWithBrowser('public map in a browser', () => {
  // The browser first (it closes first): its keep-alive connections would hold the apps' servers open.
  const browser = useBrowser({ webgl: true });
  const { db, t, startApp } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });
  let offline: TestApp;
  let baseUrl: string;
  let offlineUrl: string;

  beforeAll(async () => {
    const fixtures: LibraryFixture[] = Array.from({ length: BERLIN_KNOT }, (_, i) => ({
      lat: 52.52 + (i % 6) * 0.002,
      lng: 13.405 + Math.floor(i / 6) * 0.003,
      name: `Berlin ${i}`,
    }));
    fixtures.push({
      ...PARIS,
      city: 'Paris',
      country: 'FR',
      address: '12 Rue des Archives',
      postal_code: '75004',
    });
    fixtures.push({ lat: 52.4, lng: 13.1, status: 'pending', name: 'Not yet' });
    await insertLibraries(db.url, fixtures);
    baseUrl = await serve(t);
    // A base map on a closed port: the page must fall back to the plain background.
    offline = await startApp({
      env: { RATE_LIMIT_ENABLED: 'false', MAP_STYLE_URL: 'http://127.0.0.1:9/style.json' },
    });
    offlineUrl = await serve(offline);
  });

  /**
   * Opens `/` in a fresh context (closed after the test), records every tile response, and waits until the map has
   * drawn its first cluster label.
   */
  async function openMap(viewport: Viewport, base = baseUrl) {
    const page = await browser.newPage(base, viewport);
    const tiles: number[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/api/v1/libraries/tiles/')) tiles.push(response.status());
    });
    const response = await page.goto('/', { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    await page.waitForSelector('.cluster-label', { timeout: 30_000 });
    return { page, tiles };
  }

  const zoomOf = (page: Page) => page.evaluate(() => window.bookcaseMap!.getZoom());

  const settled = (page: Page) =>
    page.evaluate(
      () =>
        new Promise<void>((resolve) => {
          const map = window.bookcaseMap!;
          if (map.loaded()) resolve();
          else map.once('idle', () => resolve());
        }),
    );

  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const)('draws clusters from the tiles, cleanly, on a %s', async (name, viewport) => {
    const { page, tiles } = await openMap(viewport);
    const res = await request(t.http).get('/').expect(200);
    expect(res.headers['content-security-policy']).toContain("worker-src 'self';");
    expect(res.headers['content-security-policy']).not.toContain('unsafe');
    expect(res.text).toContain('href="/api/v1/docs"');
    expect(res.text).toContain('href="/admin"');

    const counts = await page
      .locator('.cluster-label')
      .evaluateAll((labels) =>
        labels.map((label) =>
          Number((label as unknown as { dataset: { count: string } }).dataset.count),
        ),
      );
    expect(counts).toEqual([BERLIN_KNOT]);
    await expect(page.locator('.cluster-label').textContent()).resolves.toBe(String(BERLIN_KNOT));
    await expect(page.locator('[data-stat="total"]').textContent()).resolves.toBe(
      String(BERLIN_KNOT + 1),
    );
    expect(tiles.length).toBeGreaterThan(0);
    expect(tiles.filter((status) => status !== 200 && status !== 204)).toEqual([]);
    expect(tiles).toContain(200);
    await checkPage(page, name, { prefix: 'map' });
  });

  it('zooms into a cluster when clicked, and opens a library popup with its name', async () => {
    const { page } = await openMap(DESKTOP);
    const before = await zoomOf(page);
    await page.locator('.cluster-label').click();
    await page.waitForFunction((zoom) => window.bookcaseMap!.getZoom() > zoom + 1.5, before);
    await settled(page);

    await page.evaluate(
      ([lng, lat]) => window.bookcaseMap!.jumpTo({ center: [lng, lat], zoom: 12 }),
      [PARIS.lng, PARIS.lat],
    );
    await settled(page);
    const point = await page.evaluate(
      ([lng, lat]) => window.bookcaseMap!.project([lng, lat]),
      [PARIS.lng, PARIS.lat],
    );
    const box = await page.locator('#map').boundingBox();
    await page.mouse.click(box!.x + point.x, box!.y + point.y);
    const popup = page.locator('.library-popup');
    await expect(popup.locator('h2').textContent()).resolves.toBe(PARIS.name);
    await page.waitForFunction(() => {
      const text = (
        globalThis as unknown as {
          document: { querySelector(s: string): { textContent: string } | null };
        }
      ).document.querySelector('.library-popup .address')?.textContent;
      return Boolean(text && text.includes('Rue des Archives'));
    });
    await checkPage(page, 'popup', { prefix: 'map' });
  });

  it('still draws the bookcases when the base map is unreachable', async () => {
    const { page } = await openMap(DESKTOP, offlineUrl);
    await expect(page.locator('#map-status').textContent()).resolves.toMatch(
      /base map is unavailable/,
    );
    const res = await request(offline.http).get('/').expect(200);
    expect(res.headers['content-security-policy']).toContain(
      "connect-src 'self' http://127.0.0.1:9",
    );
    await checkPage(page, 'offline', {
      prefix: 'map',
      allowConsole: [/ERR_CONNECTION_REFUSED|Failed to load resource|Failed to fetch/],
    });
  });
});
