// One key press measured the way a person at the viewer sees it: from the key press in the viewer
// page to the remote screen's pixel (centre, four fifths down, where the benches' key pages
// change colour) changing on the viewer's canvas. Shared by the viewer, video and files benches.
import type { Page } from 'playwright-core';

/** In the viewer page: resolves with the ms from the next keydown to the screen's pixel changing (2 s at most). */
const NEXT_KEY_TO_CHANGED_PIXEL = `new Promise((resolve) => {
  const canvas = document.querySelector('.rbk-viewer__screen canvas');
  const context = canvas.getContext('2d', { willReadFrequently: true });
  const read = () => Array.from(context.getImageData(Math.floor(canvas.width / 2), Math.floor(canvas.height * 0.8), 1, 1).data).join(',');
  const before = read();
  document.addEventListener('keydown', () => {
    const started = performance.now();
    const poll = () => (read() !== before || performance.now() - started > 2000) ? resolve(performance.now() - started) : setTimeout(poll, 1);
    poll();
  }, { capture: true, once: true });
})`;

/** Presses `a` in the viewer page and answers how long until the remote screen's pixel changed (ms). */
export async function keyToChangedPixel(page: Page): Promise<number> {
  const measured = page.evaluate(NEXT_KEY_TO_CHANGED_PIXEL);
  await page.waitForTimeout(20);
  await page.keyboard.press('a');
  return Number(await measured);
}
