/**
 * The password reset page in a real browser (Chromium through playwright-core): the link from a real mail (loopback
 * SMTP server), a weak password refused on the page, the new password set, and a used link explained. Checked at
 * 375 px and 1280 px like the console (no CSP violation, no console error, labelled controls, no overflow).
 */
import type { Locator, Page } from 'playwright-core';
import { loginUser, registerUser, sendResetMail } from '../support/auth.js';
import {
  checkPage,
  clickAndLoad,
  DESKTOP,
  describeWithBrowser,
  PHONE,
  serve,
  statusLogged,
  visit,
  type Viewport,
  useBrowser,
} from '../support/browser.js';
import { startFakeSmtp, resetTokenOf } from '../support/fake-smtp.js';
import { useTestSuite } from '../support/suite.js';

const NEW_PASSWORD = 'Juniper-Lighthouse-2604';

const textOf = async (locator: Locator) => ((await locator.textContent()) ?? '').trim();

describeWithBrowser('password reset page in a browser', () => {
  const browser = useBrowser();
  const {
    t,
    fakes: { smtp },
  } = useTestSuite({
    fakes: async () => ({ smtp: await startFakeSmtp() }),
    env: ({ smtp }) => ({ RATE_LIMIT_ENABLED: 'false', SMTP_URL: smtp.url }),
  });
  let baseUrl: string;

  beforeAll(async () => {
    baseUrl = await serve(t);
  });

  const newPage = (viewport: Viewport = DESKTOP): Promise<Page> =>
    browser.newPage(baseUrl, viewport);

  /** A new account and the path of the link its reset mail holds. */
  async function resetLink(): Promise<{ username: string; path: string }> {
    const user = await registerUser(t.http);
    await sendResetMail(t, user.email);
    const mail = smtp.to(user.email).at(-1)!;
    return { username: user.username, path: `/reset-password?token=${resetTokenOf(mail)}` };
  }

  async function submit(page: Page, password: string, again = password) {
    await page.getByLabel('New password', { exact: true }).fill(password);
    await page.getByLabel('New password, again').fill(again);
    return clickAndLoad(page, page.getByRole('button', { name: 'Set new password' }));
  }

  for (const viewport of [PHONE, DESKTOP]) {
    it(`sets a new password after refusing a weak one, at ${viewport.width} px`, async () => {
      const { username, path } = await resetLink();
      const page = await newPage(viewport);
      expect((await visit(page, path)).status()).toBe(200);
      await checkPage(page, 'form', { prefix: 'reset' });

      const weak = await submit(page, 'password123');
      expect(weak.status()).toBe(400);
      expect(await textOf(page.getByRole('alert'))).toBe('This password is too common.');
      await checkPage(page, 'weak', { prefix: 'reset', allowConsole: [statusLogged(400)] });

      const mismatch = await submit(page, NEW_PASSWORD, `${NEW_PASSWORD}!`);
      expect(mismatch.status()).toBe(400);
      expect(await textOf(page.getByRole('alert'))).toBe('New passwords do not match.');

      const done = await submit(page, NEW_PASSWORD);
      expect(done.status()).toBe(200);
      expect(await textOf(page.getByRole('status'))).toBe(
        'Your password has been reset. You can now sign in with it.',
      );
      await checkPage(page, 'done', { prefix: 'reset', allowConsole: [statusLogged(400)] });
      await loginUser(t.http, username, NEW_PASSWORD);
    });
  }

  it('explains a used link, opened again or submitted from a second tab', async () => {
    const { path } = await resetLink();
    const first = await newPage();
    const second = await newPage();
    await visit(first, path);
    await visit(second, path);
    expect((await submit(first, NEW_PASSWORD)).status()).toBe(200);

    const stale = await submit(second, 'Another-Fine-Password-77');
    expect(stale.status()).toBe(400);
    const used = 'This password reset link is invalid, expired or already used. Ask for a new one.';
    expect(await textOf(second.getByRole('alert'))).toBe(used);
    expect(await second.getByLabel('New password', { exact: true }).count()).toBe(0);
    await checkPage(second, 'used', { prefix: 'reset', allowConsole: [statusLogged(400)] });

    const again = await newPage(PHONE);
    expect((await visit(again, path)).status()).toBe(400);
    expect(await textOf(again.getByRole('alert'))).toBe(used);
    await checkPage(again, 'used-reopened', {
      prefix: 'reset',
      allowConsole: [statusLogged(400)],
    });
  });
});
