// Each tab's favicon for the viewer's tab strip (issue 36, decisions.md 112). A viewer never loads
// an image from a site the session visits: the icon is fetched inside the session (by the page
// itself, in a world of the engine's own that the page's scripts cannot see, so through the
// session's confinement and egress), handed to the engine as bytes, checked here (an image type
// whose bytes are what the type says, at most MAX_FAVICON_BYTES), and told as a data: URL.

/** The largest icon told, in bytes (a bigger one is not shown: the state carries every tab's). */
export const MAX_FAVICON_BYTES = 8 * 1024;
/** How long fetching one icon may take inside the page (ms). */
const FETCH_TIMEOUT_MS = 3000;
/**
 * The longest icon address read out of a page: a `data:` icon of MAX_FAVICON_BYTES in base64 and
 * its type (issue 43: a page's strings are cut inside it, before they cross to the engine). A
 * longer one is no icon to fetch.
 */
export const MAX_ICON_HREF = Math.ceil((MAX_FAVICON_BYTES * 4) / 3) + 200;

/**
 * An expression for the engine's own world in the page: the address of the icon it shows, `''`
 * when it has none to show. The page's `<link rel="icon">` (a 16 or 32 px one first, not a mask
 * icon, none longer than MAX_ICON_HREF), else `/favicon.ico` of an http or https page.
 */
export const ICON_HREF = `(() => {
  // The attribute's length first: resolving a huge address (its \`href\`) takes long in Firefox.
  const links = [...document.querySelectorAll('link[rel~="icon" i]')].filter((l) => (l.getAttribute('href') || '').length <= ${MAX_ICON_HREF} && l.href && !/mask-icon/i.test(l.rel));
  const small = links.find((l) => /\\b(16x16|32x32)\\b/.test(l.getAttribute('sizes') || ''));
  const link = small || links[0];
  if (link) return link.href.length <= ${MAX_ICON_HREF} ? link.href : '';
  return /^https?:$/.test(location.protocol) ? location.origin + '/favicon.ico' : '';
})()`;

/**
 * An expression for the engine's own world in the page: fetches `href` (from the page, so the
 * session's network and its cookie-free request: credentials omitted, no referrer), reading at most
 * one byte more than the cap, and answers `[contentType, base64]`, a `data:` address as it is, or
 * null (no answer, not found, too big, not an image by its headers).
 */
export function fetchIconScript(href: string): string {
  return `(async () => {
  const href = ${JSON.stringify(href)};
  if (/^data:/i.test(href)) return href.length <= ${MAX_ICON_HREF} ? href : null;
  if (!/^https?:/i.test(href)) return null;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ${FETCH_TIMEOUT_MS});
  try {
    const response = await fetch(href, { signal: abort.signal, credentials: 'omit', referrerPolicy: 'no-referrer', cache: 'force-cache' });
    const type = (response.headers.get('content-type') || '').split(';')[0].trim().toLowerCase();
    if (!response.ok || !response.body || !/^image\\//.test(type)) return null;
    const reader = response.body.getReader();
    const chunks = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // Lengths and a Blob only: Firefox forbids reading a typed array's bytes from a BiDi sandbox.
      size += value.byteLength;
      if (size > ${MAX_FAVICON_BYTES}) { abort.abort(); return null; }
      chunks.push(value);
    }
    const url = await new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result));
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(new Blob(chunks));
    });
    return [type, url.slice(url.indexOf(',') + 1)];
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
})()`;
}

/** The image types told, each with how its bytes begin (SVG: text with an <svg element). */
const SIGNATURES: Record<string, (bytes: Buffer) => boolean> = {
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/gif': (b) => /^GIF8[79]a/.test(b.subarray(0, 6).toString('latin1')),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/webp': (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  'image/x-icon': (b) => b[0] === 0 && b[1] === 0 && b[2] === 1 && b[3] === 0,
  'image/svg+xml': (b) => /<svg[\s>]/i.test(b.toString('utf8')),
};
/** Other names sites give their icons' types. */
const ALIASES: Record<string, string> = { 'image/vnd.microsoft.icon': 'image/x-icon', 'image/ico': 'image/x-icon', 'image/icon': 'image/x-icon', 'image/jpg': 'image/jpeg' };

/**
 * The icon as the state tells it: a `data:<image type>;base64,` address, or undefined when what the
 * page gave is not an icon to show (no answer, another type, bytes that are not that type, too big).
 * An `.ico` served as PNG (or the other way round) is told as what its bytes are.
 */
export function faviconDataUrl(answer: unknown): string | undefined {
  let type: string;
  let bytes: Buffer;
  if (typeof answer === 'string') {
    const data = /^data:([^;,]*)((?:;[^;,]*)*?)(;base64)?,(.*)$/is.exec(answer);
    if (!data) return undefined;
    type = data[1]!.trim().toLowerCase();
    try {
      bytes = data[3] ? Buffer.from(data[4]!, 'base64') : Buffer.from(decodeURIComponent(data[4]!), 'utf8');
    } catch {
      return undefined;
    }
  } else if (Array.isArray(answer) && typeof answer[0] === 'string' && typeof answer[1] === 'string') {
    type = answer[0].toLowerCase();
    bytes = Buffer.from(answer[1], 'base64');
  } else return undefined;
  if (bytes.length === 0 || bytes.length > MAX_FAVICON_BYTES) return undefined;
  type = ALIASES[type] ?? type;
  if (!SIGNATURES[type]?.(bytes)) {
    // Sites often say the wrong raster type (an .ico sent as image/png): the bytes decide.
    const actual = Object.keys(SIGNATURES).find((name) => name !== 'image/svg+xml' && SIGNATURES[name]!(bytes));
    if (!actual || !type.startsWith('image/')) return undefined;
    type = actual;
  }
  return `data:${type};base64,${bytes.toString('base64')}`;
}
