// <SessionLauncher>'s layout in Debian Chromium, from a fresh `storybook build`: with and without
// exit locations and a residential connection, no field is taller than what it shows, and controls
// the service does not offer take no space: the form has no empty band between its controls.
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorybook, type BuiltStorybook } from '../helpers/storybook.js';
import { resources } from '../../src/react/i18n.js';

const en = resources.en.launcher;

/** The form's gap between controls is 0.75rem (12 px); anything taller is an empty block. */
const LARGEST_GAP_PX = 16;

let storybook: BuiltStorybook;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  storybook = await openStorybook();
  ({ browser, origin } = storybook);
}, 240_000);

afterAll(async () => {
  await storybook?.close();
});

interface Band {
  /** Pixels of nothing between two drawn things, top to bottom. */
  height: number;
  above: string;
  below: string;
}

/**
 * The empty horizontal bands inside the launcher's form: every visible text, control and box is
 * projected onto the vertical axis, and the gaps between them (and to the form's edges) measured.
 */
function emptyBands(page: Page): Promise<Band[]> {
  return page.evaluate(() => {
    const form = document.querySelector('.rbk-launcher__form')!;
    const formBox = form.getBoundingClientRect();
    const drawn: Array<{ top: number; bottom: number; name: string }> = [];
    const name = (el: Element) => `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(' ')[0]}` : ''} "${(el.textContent ?? '').trim().slice(0, 24)}"`;
    const visit = (el: Element) => {
      const box = el.getBoundingClientRect();
      if (box.height === 0 || box.width === 0 || getComputedStyle(el).visibility === 'hidden') return;
      // A control, or an element drawing its own text: something a person sees there.
      const control = el.matches('input, select, button, textarea, summary');
      const text = [...el.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent!.trim() !== '');
      if (control || text) drawn.push({ top: box.top, bottom: box.bottom, name: name(el) });
      if (!control) for (const child of el.children) visit(child);
    };
    for (const child of form.children) visit(child);
    drawn.sort((a, b) => a.top - b.top);
    const bands: Array<{ height: number; above: string; below: string }> = [];
    let reached = formBox.top;
    let above = 'top of the form';
    for (const item of drawn) {
      if (item.top > reached) bands.push({ height: Math.round(item.top - reached), above, below: item.name });
      if (item.bottom > reached) {
        reached = item.bottom;
        above = item.name;
      }
    }
    if (formBox.bottom > reached) bands.push({ height: Math.round(formBox.bottom - reached), above, below: 'bottom of the form' });
    return bands;
  });
}

/** Vertical pixels between the bottom of one element and the top of the next. */
function spaceBetween(page: Page, upper: string, lower: string): Promise<number> {
  return page.evaluate(
    ([a, b]) => Math.round(document.querySelector(b!)!.getBoundingClientRect().top - document.querySelector(a!)!.getBoundingClientRect().bottom),
    [upper, lower],
  );
}

async function openStory(id: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${origin}/iframe.html?id=${id}&viewMode=story`);
  await page.locator('.rbk-launcher[data-state="ready"]').waitFor({ timeout: 20_000 });
  // The browser list has arrived and the play function (if any) has done its part.
  await page.getByRole('button', { name: en.launch }).and(page.locator(':enabled')).waitFor({ timeout: 20_000 });
  return page;
}

/** The form's largest empty band is no taller than its gap between controls. */
async function expectNoEmptyBlock(page: Page): Promise<void> {
  const largest = (await emptyBands(page)).reduce<Band>((max, band) => (band.height > max.height ? band : max), { height: 0, above: '', below: '' });
  expect(largest.height, `${largest.height} px empty between ${largest.above} and ${largest.below}`).toBeLessThanOrEqual(LARGEST_GAP_PX);
}

describe('SessionLauncher layout', () => {
  it('without exit locations or a residential connection, More options follows the start page', async () => {
    // The Ready story: the service lists no exit locations and has no residential connection.
    const page = await openStory('components-sessionlauncher--ready');
    try {
      expect(await page.getByRole('combobox', { name: en.location }).count()).toBe(0);
      expect(await page.getByRole('checkbox', { name: en.residential }).count()).toBe(0);

      const browserField = '.rbk-launcher__form > .rbk-launcher__field:nth-child(1)';
      const urlField = '.rbk-launcher__form > .rbk-launcher__field:nth-child(2)';
      // From the Browser list to the Start page label, and from the start page's hint to More options.
      expect(await spaceBetween(page, `${browserField} select`, `${urlField} label`)).toBeLessThanOrEqual(LARGEST_GAP_PX);
      expect(await spaceBetween(page, `${urlField} .rbk-launcher__hint`, '.rbk-launcher__options summary')).toBeLessThanOrEqual(LARGEST_GAP_PX);
      await expectNoEmptyBlock(page);
    } finally {
      await page.close();
    }
  });

  it('with exit locations and a residential connection, every control sits right after the one before', async () => {
    const page = await openStory('components-sessionlauncher--with-exit-locations');
    try {
      await page.getByRole('combobox', { name: en.city }).waitFor();
      expect(await page.getByRole('checkbox', { name: en.residential }).count()).toBe(1);

      const browserField = '.rbk-launcher__form > .rbk-launcher__field:nth-child(1)';
      const urlField = '.rbk-launcher__form > .rbk-launcher__field:nth-child(2)';
      expect(await spaceBetween(page, `${browserField} select`, `${urlField} label`)).toBeLessThanOrEqual(LARGEST_GAP_PX);
      expect(await spaceBetween(page, `${urlField} .rbk-launcher__hint`, '.rbk-launcher__row label')).toBeLessThanOrEqual(LARGEST_GAP_PX);
      expect(await spaceBetween(page, '.rbk-launcher__check', '.rbk-launcher__options summary')).toBeLessThanOrEqual(LARGEST_GAP_PX);
      await expectNoEmptyBlock(page);

      // Exit location and City share a row.
      const [country, city] = await Promise.all([page.getByRole('combobox', { name: en.location }).boundingBox(), page.getByRole('combobox', { name: en.city }).boundingBox()]);
      expect(Math.abs(country!.y - city!.y)).toBeLessThanOrEqual(1);
    } finally {
      await page.close();
    }
  });

  it('with the note that locations are not in the plan, and More options open, there is no empty space', async () => {
    const page = await openStory('components-sessionlauncher--no-location-access');
    try {
      await page.getByText(en.locationNotIncluded).waitFor();
      await page.getByText(en.options).click();
      await page.getByRole('combobox', { name: en.language }).waitFor();
      await expectNoEmptyBlock(page);
    } finally {
      await page.close();
    }
  });
});
