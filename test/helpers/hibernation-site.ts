// Test helper for hibernation (issue 46): a loopback site whose /login answer sets a login cookie
// and sends the browser on to /home (as a site's sign-in does: no page a tab keeps sets it again),
// and whose three pages, each a colour of its own, report to the site on every load whether the
// cookie is there; the tests read the reports and the colour on screen. /big stores 20 MB that
// do not compress in IndexedDB, and reports once they are stored. /get downloads /report.bin
// (`DOWNLOAD_BYTES`, an attachment) as it first loads in a profile (loaded again, it does not).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What /report.bin downloads: 200 KB that do not compress. */
export const DOWNLOAD_BYTES = randomBytes(200 * 1024);

export interface PageReport {
  page: string;
  cookie: string;
}

export const PAGE_COLOURS: Record<'home' | 'second' | 'third', [number, number, number]> = {
  home: [200, 40, 40],
  second: [40, 170, 60],
  third: [40, 70, 200],
};

const page = (name: keyof typeof PAGE_COLOURS) => {
  const [r, g, b] = PAGE_COLOURS[name];
  return `<!doctype html><title>${name}</title><body style="margin:0;background:rgb(${r},${g},${b})"><script>
fetch('/report', { method: 'POST', body: JSON.stringify({ page: ${JSON.stringify(name)}, cookie: document.cookie }) });
</script></body>`;
};

/** The site's handler; what the pages report is pushed onto `reports`. */
export function hibernationSite(reports: PageReport[]): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    if (path === '/report' && request.method === 'POST') {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        try {
          reports.push(JSON.parse(body) as PageReport);
        } catch {
          // Not a report.
        }
        response.writeHead(204).end();
      });
      return;
    }
    if (path === '/big') {
      // 20 MB that do not compress, stored in IndexedDB: a state past a small cap.
      return void response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(`<!doctype html><title>big</title><script>
const open = indexedDB.open('big', 1);
open.onupgradeneeded = () => open.result.createObjectStore('things');
open.onsuccess = () => {
  const big = new Uint8Array(20 * 1024 * 1024);
  for (let i = 0; i < big.length; i += 65536) crypto.getRandomValues(big.subarray(i, i + 65536));
  const tx = open.result.transaction('things', 'readwrite');
  tx.objectStore('things').put(big, 'big');
  tx.oncomplete = () => fetch('/report', { method: 'POST', body: JSON.stringify({ page: 'big', cookie: document.cookie }) });
};
</script>`);
    }
    if (path === '/get') {
      return void response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end('<!doctype html><title>get</title><a id="get" href="/report.bin" download>report</a><script>if (!localStorage.got) { localStorage.got = "1"; document.getElementById("get").click(); }</script>');
    }
    if (path === '/report.bin') {
      return void response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="report.bin"', 'content-length': DOWNLOAD_BYTES.length }).end(DOWNLOAD_BYTES);
    }
    if (path === '/login') {
      return void response.writeHead(302, { location: '/home', 'cache-control': 'no-store', 'set-cookie': 'login=alice; Max-Age=86400; Path=/; SameSite=Lax' }).end();
    }
    const name = path.slice(1) as keyof typeof PAGE_COLOURS;
    if (!(name in PAGE_COLOURS)) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(page(name));
  };
}
