/**
 * Browser tests of the staff console: Debian's Chromium driven by playwright-core against the real app listening on a
 * loopback port. Every checked page is screenshotted into test/artifacts/ and must show no console error, no page
 * error and no Content-Security-Policy violation, no horizontal overflow and a label on every control.
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type Locator,
  type Page,
  type Response,
} from 'playwright-core';
import type { TestApp } from './app.js';

/** Chromium to launch: CHROMIUM_PATH, else Debian's package. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const BROWSER_AVAILABLE = existsSync(CHROMIUM_PATH);

export const ARTIFACTS_DIR = fileURLToPath(new URL('../artifacts/', import.meta.url));

export const PHONE = { width: 375, height: 812 };
export const DESKTOP = { width: 1280, height: 800 };
export type Viewport = typeof PHONE;

const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * `describe` for browser suites. Without Chromium the suite is skipped with a note, or, when REQUIRE_BROWSER=1 (CI),
 * it fails with the reason.
 */
export function describeWithBrowser(name: string, body: () => void): void {
  if (BROWSER_AVAILABLE) {
    describe(name, body);
    return;
  }
  const reason = `No Chromium at ${CHROMIUM_PATH} (set CHROMIUM_PATH, or install it: apt-get install -y chromium).`;
  if (process.env.REQUIRE_BROWSER === '1') {
    describe(name, () => {
      it('needs Chromium (REQUIRE_BROWSER=1)', () => {
        throw new Error(`${reason} REQUIRE_BROWSER=1 makes this fatal.`);
      });
    });
    return;
  }
  console.warn(`${reason} Browser suite "${name}" skipped.`);
  describe.skip(name, body);
}

/** Software WebGL (SwiftShader) for pages that draw with it, such as the public map. */
const WEBGL_ARGS = ['--use-gl=angle', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'];

export function launchBrowser(options: { webgl?: boolean } = {}): Promise<Browser> {
  const args = options.webgl
    ? [...LAUNCH_ARGS.filter((arg) => arg !== '--disable-gpu'), ...WEBGL_ARGS]
    : LAUNCH_ARGS;
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args });
}

/** Starts the test app's HTTP server on a free loopback port; answers its base URL. */
export async function serve(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  const address = t.app.getHttpServer().address() as AddressInfo;
  return `http://127.0.0.1:${address.port}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Pages and their problems
// ---------------------------------------------------------------------------------------------------------------

interface Problems {
  console: string[];
  pageErrors: string[];
}

const problemsOf = new WeakMap<Page, Problems>();

/** Records every Content-Security-Policy violation of each document (init scripts are not subject to the CSP). */
const CSP_RECORDER = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (event) => {
    window.__cspViolations.push(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline'));
  });
`;

export interface OpenedPage {
  context: BrowserContext;
  page: Page;
}

/** A fresh context (no cookies) of this viewport and one page in it, with its problems recorded. */
export async function openPage(
  browser: Browser,
  baseURL: string,
  viewport: Viewport = DESKTOP,
): Promise<OpenedPage> {
  const context = await browser.newContext({ baseURL, viewport, deviceScaleFactor: 1 });
  await context.addInitScript({ content: CSP_RECORDER });
  const page = await context.newPage();
  const problems: Problems = { console: [], pageErrors: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') {
      const where = message.location().url;
      problems.console.push(where ? `${message.text()} (${where})` : message.text());
    }
  });
  page.on('pageerror', (error) => problems.pageErrors.push(String(error)));
  problemsOf.set(page, problems);
  return { context, page };
}

/**
 * A browser for the enclosing describe, and pages in fresh contexts closed after each test. Declare it before the
 * suite (useTestSuite, mapSuite): hooks run in declaration order, and the browser must close before the app, whose
 * server its keep-alive connections would hold open.
 */
export function useBrowser(options: { webgl?: boolean } = {}) {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchBrowser(options);
  });

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()));
  });

  afterAll(async () => {
    await browser?.close();
  });

  return {
    /** A page of a fresh context on `baseURL` (see openPage), closed after the test. */
    async newPage(baseURL: string, viewport: Viewport = DESKTOP): Promise<Page> {
      if (!browser) throw new Error('the browser is not launched yet (use it in a hook or test)');
      const { context, page } = await openPage(browser, baseURL, viewport);
      contexts.push(context);
      return page;
    },
  };
}

/**
 * Clicks something that submits a form or follows a link and waits until the next document has loaded; answers the
 * last main-frame navigation response (the page after redirects).
 */
export async function clickAndLoad(page: Page, target: Locator): Promise<Response> {
  const responses: Response[] = [];
  const onResponse = (response: Response) => {
    const request = response.request();
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
      responses.push(response);
    }
  };
  page.on('response', onResponse);
  try {
    const loaded = page.waitForEvent('load');
    await target.click();
    await loaded;
  } finally {
    page.off('response', onResponse);
  }
  const last = responses.at(-1);
  if (!last) throw new Error('clickAndLoad: no navigation followed the click');
  return last;
}

/** GET a console path; answers the final response. */
export async function visit(page: Page, path: string): Promise<Response> {
  const response = await page.goto(path, { waitUntil: 'load' });
  if (!response) throw new Error(`visit: no response for ${path}`);
  return response;
}

/** Signs in through the form (answers once the page after sign-in has loaded). */
export async function signIn(
  page: Page,
  username: string,
  password: string,
  path = '/admin/login',
): Promise<Response> {
  await visit(page, path);
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password').fill(password);
  return clickAndLoad(page, page.getByRole('button', { name: 'Sign in' }));
}

export interface CheckOptions {
  /** Console errors to accept (an expected 4xx of the page itself, say). */
  allowConsole?: RegExp[];
  /** The screenshot's name prefix (`console` unless told). */
  prefix?: string;
}

/** The console line Chromium logs for a document answered with this status. */
export const statusLogged = (status: number): RegExp =>
  new RegExp(`Failed to load resource: the server responded with a status of ${status}\\b`);

interface PageFacts {
  scrollWidth: number;
  innerWidth: number;
  unlabelled: string[];
  unnamedButtons: string[];
  csp: string[];
}

// The page functions below run in the browser; these are the few DOM shapes they use (the project's TypeScript
// configuration has no DOM library).
interface DomElement {
  tagName: string;
  id: string;
  outerHTML: string;
  textContent: string | null;
  labels?: ArrayLike<unknown> | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}
declare const document: DomElement & { documentElement: { scrollWidth: number } };
declare const window: { innerWidth: number; __cspViolations?: string[] };

/**
 * Checks the loaded page: no horizontal overflow at this viewport, an accessible label on every form control and a
 * name on every button, no console error (but `allowConsole`), page error or CSP violation since the page was
 * opened; then saves a full-page screenshot as test/artifacts/<prefix>-<name>-<width>.png (prefix `console` unless
 * told). Answers the screenshot path.
 */
export async function checkPage(
  page: Page,
  name: string,
  options: CheckOptions = {},
): Promise<string> {
  await page.waitForLoadState('load');
  const facts: PageFacts = await page.evaluate(() => {
    const outline = (el: DomElement) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} ${el.outerHTML.slice(0, 120)}`;
    const controls = Array.from(
      document.querySelectorAll('input:not([type="hidden"]), select, textarea'),
    );
    const unlabelled = controls
      .filter(
        (el) =>
          !(el.labels && el.labels.length > 0) &&
          !el.getAttribute('aria-label')?.trim() &&
          !el.getAttribute('aria-labelledby'),
      )
      .map(outline);
    const unnamedButtons = Array.from(document.querySelectorAll('button, [role="button"]'))
      .filter((el) => !el.textContent?.trim() && !el.getAttribute('aria-label')?.trim())
      .map(outline);
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      unlabelled,
      unnamedButtons,
      csp: window.__cspViolations ?? [],
    };
  });
  const width = page.viewportSize()?.width ?? facts.innerWidth;
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${options.prefix ?? 'console'}-${name}-${width}.png`);
  await page.screenshot({ path, fullPage: true });

  const problems = problemsOf.get(page) ?? { console: [], pageErrors: [] };
  const allowed = options.allowConsole ?? [];
  const consoleErrors = problems.console.filter((text) => !allowed.some((re) => re.test(text)));
  const report = {
    page: `${name} at ${width} px (${page.url()})`,
    overflow: facts.scrollWidth > width ? `scrollWidth ${facts.scrollWidth} > ${width}` : null,
    unlabelled: facts.unlabelled,
    unnamedButtons: facts.unnamedButtons,
    consoleErrors,
    pageErrors: problems.pageErrors,
    csp: facts.csp,
  };
  expect(report).toEqual({
    page: report.page,
    overflow: null,
    unlabelled: [],
    unnamedButtons: [],
    consoleErrors: [],
    pageErrors: [],
    csp: [],
  });
  // Problems are reported once: the next check covers what happens after this one.
  problems.console.splice(0);
  problems.pageErrors.splice(0);
  return path;
}

/** Text of the one-time flash message of the page (notice or error), or null. */
export async function flashText(page: Page): Promise<string | null> {
  const flash = page.locator('.flash-notice, .flash-error').first();
  return (await flash.count()) ? ((await flash.textContent()) ?? '').trim() : null;
}
