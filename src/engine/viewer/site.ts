// The viewer site the engine serves: share-link pages `/<lang>/s?<link_id>` and `/s?<link_id>`
// (decisions.md 8), replay links' pages `/replay/<token>` (decisions.md 110), the launch page at
// `/`, and their assets, built by Vite from <ShareViewer> and <SessionReplay>; and
// `<remote-browser-viewer>` as one script at `/element.js` (decisions.md 136).
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SECURITY_HEADERS } from '../../http/headers.js';
import type { LinkPage } from './share-api.js';
import { framingHeaders } from './framing.js';
import { REPLAY_PATH, type ReplayStatus } from '../recordings/replay-api.js';

/** Where `npm run build` puts the site; the same place from src/ (tsx) and from dist/. */
// (Path arithmetic, not `new URL(relative, import.meta.url)`: under jsdom the global URL is not Node's.)
export const VIEWER_SITE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'dist', 'viewer-site');
/** `<remote-browser-viewer>` as one script (`vite build --mode element`), served at /element.js. */
export const ELEMENT_SCRIPT = join(VIEWER_SITE_DIR, '..', 'element-script', 'element.js');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

// The link id is in the page's address: no Referer may carry it elsewhere. The page talks only
// to its own origin (share API, events, WebSocket).
const POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'";
const PAGE_HEADERS = {
  ...SECURITY_HEADERS,
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), clipboard-write=(self)',
};
/** A page no other site may frame: the launch page, replays, unknown and ended links, a link whose account allows none. */
const UNFRAMED = framingHeaders(POLICY, []);

const SHARE_PAGE = /^\/(?:[A-Za-z-]{1,10}\/)?s$/;
const LINK_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface ViewerSiteOptions {
  /** Where the built site is. */
  dir?: string;
  /** Where the element's one script is (default ELEMENT_SCRIPT). */
  elementScript?: string;
  /**
   * The state of a share page's link, so that its HTTP status says it too (link previews,
   * crawlers, curl): 200 while the session exists, 410 once deleted, 404 for a link that never
   * existed; and the origins that may frame it (issue 44). Without it every share page answers
   * 200 and no other site may frame it.
   */
  linkStatus?: (request: IncomingMessage, linkId: string) => Promise<LinkPage>;
  /** The state of a replay page's token, for its HTTP status in the same way; without it every replay page answers 200. */
  replayStatus?: (request: IncomingMessage, token: string) => Promise<ReplayStatus>;
}

type PageAnswer = { code: number; retryAfter?: number; frameOrigins?: readonly string[] };

/** The share page's HTTP status for its link, and who may frame it; the page is the same and says what happened in the link's language. */
async function shareStatus(options: ViewerSiteOptions, request: IncomingMessage, url: URL): Promise<PageAnswer> {
  if (!options.linkStatus) return { code: 200 };
  // The link id is the first part of the query (`/s?<link_id>`, then the embedder's `&` options); base64url needs no decoding.
  const linkId = url.search.slice(1).split('&')[0] ?? '';
  if (!LINK_ID.test(linkId)) return { code: 404 };
  const { status, frameOrigins } = await options.linkStatus(request, linkId);
  if (typeof status === 'object') return { code: 429, retryAfter: status.limited };
  return status === 'live' ? { code: 200, frameOrigins } : { code: status === 'deleted' ? 410 : 404 };
}

/** The replay page's HTTP status for its token (replay-api.ts pageStatus); the page says what happened in the browser's language. */
async function replayStatus(options: ViewerSiteOptions, request: IncomingMessage, token: string): Promise<PageAnswer> {
  if (!options.replayStatus) return { code: 200 };
  const status = await options.replayStatus(request, token);
  return typeof status === 'object' ? { code: 429, retryAfter: status.limited } : { code: status };
}

export function createViewerSite(options: ViewerSiteOptions = {}) {
  const dir = options.dir ?? VIEWER_SITE_DIR;
  const pages = new Map<string, Buffer>();
  async function page(name: string): Promise<Buffer | null> {
    const cached = pages.get(name);
    if (cached) return cached;
    try {
      const content = await readFile(join(dir, name));
      pages.set(name, content);
      return content;
    } catch {
      return null;
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse, url: URL): Promise<boolean> {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    const replay = REPLAY_PATH.exec(url.pathname);
    const pageName = SHARE_PAGE.test(url.pathname) ? 'index.html' : replay && !replay[2] ? 'replay.html' : url.pathname === '/' ? 'launch.html' : null;
    if (pageName) {
      const content = await page(pageName);
      if (!content) {
        response.writeHead(503, { ...PAGE_HEADERS, ...UNFRAMED, 'content-type': 'text/plain; charset=utf-8' }).end('The viewer site is not built: run `npm run build`.');
        return true;
      }
      const { code, retryAfter, frameOrigins } = pageName === 'index.html' ? await shareStatus(options, request, url) : pageName === 'replay.html' ? await replayStatus(options, request, replay![1]!) : ({ code: 200 } as PageAnswer);
      response.writeHead(code, {
        ...PAGE_HEADERS,
        ...(frameOrigins ? framingHeaders(POLICY, frameOrigins) : UNFRAMED),
        'content-type': CONTENT_TYPES['.html']!,
        'content-length': content.length,
        // The status may change with the session: never cached.
        'cache-control': 'no-store',
        ...(retryAfter ? { 'retry-after': String(retryAfter) } : {}),
      });
      response.end(request.method === 'HEAD' ? undefined : content);
      return true;
    }
    // Any page may load the element (issue 44): framing itself is what the account's origins allow.
    if (url.pathname === '/element.js') {
      const script = await readFile(options.elementScript ?? ELEMENT_SCRIPT).catch(() => null);
      if (!script) {
        response.writeHead(503, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end('The element is not built: run `npm run build`.');
        return true;
      }
      response.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': CONTENT_TYPES['.js']!,
        'content-length': script.length,
        // A module script of another origin is fetched with CORS; its name does not change with its content.
        'access-control-allow-origin': '*',
        'cross-origin-resource-policy': 'cross-origin',
        'cache-control': 'public, max-age=300',
      });
      response.end(request.method === 'HEAD' ? undefined : script);
      return true;
    }
    if (url.pathname === '/favicon.ico') {
      response.writeHead(204, SECURITY_HEADERS).end();
      return true;
    }
    if (!url.pathname.startsWith('/assets/')) return false;
    const file = normalize(join(dir, url.pathname));
    if (!file.startsWith(join(dir, 'assets'))) return false;
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) return false;
    // Asset names carry a content hash: they never change.
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': info.size,
      'cache-control': 'public, max-age=31536000, immutable',
    });
    if (request.method === 'HEAD') response.end();
    else createReadStream(file).pipe(response);
    return true;
  }

  return { handle };
}
