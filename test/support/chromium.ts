/** Debian's Chromium (never a downloaded one), headless, without the background services that would reach the network. */
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { AppDefinition } from '../../src/framework/index.js';
import { startApi, type TestApi } from './api.js';

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });

/** A page whose every request carries `token` as a Bearer credential. */
export const signedInPage = (browser: Browser, token: string): Promise<Page> => browser.newPage({ extraHTTPHeaders: { authorization: `Bearer ${token}` } });

/** The JSON the browsable page shows as the response body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test reads the record shape it made
export const shownBody = async (page: Page): Promise<any> => JSON.parse((await page.locator('#response-body').textContent()) ?? 'null');

/**
 * `app` served on a loopback port for a test file's tests, with alice signed in to a Chromium page;
 * `prepare` runs with her token before the browser starts; `env`: settings over the test app's. Read
 * `api`, `base` and `page` inside tests.
 */
export function servedToChromium(
  app: AppDefinition,
  prepare?: (api: TestApi, token: string) => Promise<void>,
  env: Record<string, string> = {},
): { readonly api: TestApi; readonly base: string; readonly page: Page } {
  const served = {} as { api: TestApi; base: string; page: Page };
  let browser: Browser | undefined;
  beforeAll(async () => {
    served.api = await startApi(env, app);
    served.base = `http://127.0.0.1:${await served.api.listen()}`;
    const { token } = await served.api.user('alice');
    await prepare?.(served.api, token);
    browser = await launchChromium();
    served.page = await signedInPage(browser, token);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served.api?.close();
  });
  return served;
}
