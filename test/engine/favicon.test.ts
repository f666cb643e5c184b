// What a page's icon must be to reach a viewer (decisions.md 112): the engine turns what the page
// answered into a data: image address only when its bytes are an image of the type said (or of a
// raster type the bytes show) and at most 8 KB; anything else is told as no icon. The viewer's own
// check (isFavicon) accepts what the engine tells and nothing that would load from the web.
import { describe, expect, it } from 'vitest';
import { faviconDataUrl, MAX_FAVICON_BYTES } from '../../src/engine/runtime/browser/favicon.js';
import { isFavicon } from '../../src/protocol/tabs.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const ICO = Buffer.from([0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0, 0, 0]);
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="8"/></svg>';

describe('a tab icon', () => {
  it('is told as a data: address of the image the bytes are', () => {
    const png = faviconDataUrl(['image/png', PNG.toString('base64')]);
    expect(png).toBe(`data:image/png;base64,${PNG.toString('base64')}`);
    expect(isFavicon(png)).toBe(true);
    // Other names of the icon type, and a wrong raster type, are told as what the bytes are.
    expect(faviconDataUrl(['image/vnd.microsoft.icon', ICO.toString('base64')])).toBe(`data:image/x-icon;base64,${ICO.toString('base64')}`);
    expect(faviconDataUrl(['image/png', ICO.toString('base64')])).toBe(`data:image/x-icon;base64,${ICO.toString('base64')}`);
    // A page's own data: icon, base64 or not (an emoji SVG is often written out).
    expect(faviconDataUrl(`data:image/png;base64,${PNG.toString('base64')}`)).toBe(`data:image/png;base64,${PNG.toString('base64')}`);
    const svg = faviconDataUrl(`data:image/svg+xml,${encodeURIComponent(SVG)}`);
    expect(svg).toBe(`data:image/svg+xml;base64,${Buffer.from(SVG).toString('base64')}`);
    expect(isFavicon(svg)).toBe(true);
  });

  it('is none when it is not an image, too big, or nothing', () => {
    expect(faviconDataUrl(['text/html', Buffer.from('<html>').toString('base64')])).toBeUndefined();
    expect(faviconDataUrl(['image/png', Buffer.from('<html><script>alert(1)</script>').toString('base64')])).toBeUndefined();
    expect(faviconDataUrl(['image/svg+xml', Buffer.from('just text').toString('base64')])).toBeUndefined();
    expect(faviconDataUrl(['image/png', Buffer.concat([PNG, Buffer.alloc(MAX_FAVICON_BYTES)]).toString('base64')])).toBeUndefined();
    expect(faviconDataUrl(['image/png', ''])).toBeUndefined();
    expect(faviconDataUrl('data:text/html,<svg>')).toBeUndefined();
    expect(faviconDataUrl('https://example.com/favicon.ico')).toBeUndefined();
    expect(faviconDataUrl(null)).toBeUndefined();
    expect(faviconDataUrl({ type: 'image/png' })).toBeUndefined();
  });

  it('is shown by a viewer only as a data: image', () => {
    expect(isFavicon('https://example.com/favicon.ico')).toBe(false);
    expect(isFavicon('data:text/html;base64,PGgxPg==')).toBe(false);
    expect(isFavicon('data:image/png;base64,iVBOR"onerror="x')).toBe(false);
    expect(isFavicon(`data:image/png;base64,${'A'.repeat(20_000)}`)).toBe(false);
    expect(isFavicon(undefined)).toBe(false);
  });
});
