// Test helper for hibernation (issue 46): a loopback site whose /login answer sets a login cookie
// and sends the browser on to /home (as a site's sign-in does: no page a tab keeps sets it again),
// and whose three pages, each a colour of its own, report to the site on every load whether the
// cookie is there; the tests read the reports and the colour on screen.
import type { IncomingMessage, ServerResponse } from 'node:http';

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
    if (path === '/login') {
      return void response.writeHead(302, { location: '/home', 'cache-control': 'no-store', 'set-cookie': 'login=alice; Max-Age=86400; Path=/; SameSite=Lax' }).end();
    }
    const name = path.slice(1) as keyof typeof PAGE_COLOURS;
    if (!(name in PAGE_COLOURS)) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(page(name));
  };
}
