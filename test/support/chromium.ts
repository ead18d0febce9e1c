/** Debian's Chromium (never a downloaded one), headless, without the background services that would reach the network. */
import { chromium, type Browser, type Page } from 'playwright-core';

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
