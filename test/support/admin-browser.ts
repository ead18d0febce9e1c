/** Steps the admin's Chromium tests share. */
import type { Page } from 'playwright-core';

/** Clicks `selector` and waits for the page it loads (a form's submission, a link). */
export const submit = (page: Page, selector: string) => Promise.all([page.waitForEvent('load'), page.click(selector)]);

/** The example service's article titles in a change list: its first declared column, after the checkbox. */
export const titles = (page: Page) => page.locator('table.results tbody tr td:nth-child(2)').allTextContents();
