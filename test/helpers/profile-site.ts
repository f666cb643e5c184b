// Test helper for saved profiles (issue 34): a loopback site whose /set page stores a cookie,
// a localStorage entry and an IndexedDB record (/big: and 4 MB more), whose /zeros page writes
// 60 MB of zeros into the origin private file system and 20 MB into IndexedDB (issue 47), and whose /read page reads them; each page
// reports to the site what it did (and, as `visible`, that it is the tab that shows), and the test waits for the report.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StateReport {
  page: string;
  cookie: string;
  local: string | null;
  indexed: string | null;
  /** The size of the file /zeros wrote into the origin private file system, null when there is none. */
  opfs?: number | null;
}

const PAGE = (page: string, value: string) => `<!doctype html><title>${page}</title><script>
// Where the browser has no origin private file system (or it does not answer within 2 s), null.
const opfsSize = () => Promise.race([
  Promise.resolve().then(() => navigator.storage.getDirectory()).then((root) => root.getFileHandle('zeros')).then((handle) => handle.getFile()).then((file) => file.size, () => null),
  new Promise((resolve) => setTimeout(() => resolve(null), 2000)),
]);
const report = (indexed) => opfsSize().then((opfs) => fetch('/report', { method: 'POST', body: JSON.stringify({ page: ${JSON.stringify(page)}, cookie: document.cookie, local: localStorage.getItem('kept'), indexed, opfs }) }));
// Which tab shows: the visible page says so four times a second (its address in \`local\`).
setInterval(() => document.visibilityState === 'visible' && fetch('/report', { method: 'POST', body: JSON.stringify({ page: 'visible', cookie: '', local: location.search, indexed: null }) }), 250);
const open = indexedDB.open('profile-test', 1);
open.onupgradeneeded = () => open.result.createObjectStore('things');
open.onerror = () => report('open failed');
open.onsuccess = () => {
  const db = open.result;
  if (${JSON.stringify(page)} === 'zeros') {
    // What an innocent page's zero-filled cache does, or a hostile one on purpose: it compresses a million-fold.
    navigator.storage.getDirectory().then((root) => root.getFileHandle('zeros', { create: true })).then(async (handle) => {
      const writable = await handle.createWritable();
      await writable.write(new Uint8Array(60 * 1024 * 1024));
      await writable.close();
      const tx = db.transaction('things', 'readwrite');
      tx.objectStore('things').put(new Uint8Array(20 * 1024 * 1024), 'zeros');
      tx.oncomplete = () => report('zeros written');
      tx.onerror = () => report('zeros failed');
    }).catch((error) => report('zeros failed: ' + error));
  } else if (${JSON.stringify(page)} === 'set' || ${JSON.stringify(page)} === 'big') {
    localStorage.setItem('kept', ${JSON.stringify(value)});
    const tx = db.transaction('things', 'readwrite');
    tx.objectStore('things').put(${JSON.stringify(value)}, 'kept');
    // /big: 4 MB that do not compress, beside the rest.
    if (${JSON.stringify(page)} === 'big') { const big = new Uint8Array(4 * 1024 * 1024); for (let i = 0; i < big.length; i += 65536) crypto.getRandomValues(big.subarray(i, i + 65536)); tx.objectStore('things').put(big, 'big'); }
    tx.oncomplete = () => report(${JSON.stringify(value)});
  } else {
    const get = db.transaction('things').objectStore('things').get('kept');
    get.onsuccess = () => report(get.result ?? null);
    get.onerror = () => report(null);
  }
};
</script>`;

/** Serves /set (stores `value` in all three places, and a persistent cookie) and /read; collects the pages' reports. */
export async function serveProfileSite(value: string): Promise<{ server: Server; origin: string; reports: StateReport[] }> {
  const reports: StateReport[] = [];
  const server = createServer((request, response) => {
    if (request.url === '/report' && request.method === 'POST') {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        reports.push(JSON.parse(body) as StateReport);
        response.writeHead(204).end();
      });
      return;
    }
    if (request.url?.startsWith('/set')) {
      response.writeHead(200, { 'content-type': 'text/html', 'set-cookie': `kept=${value}; Max-Age=864000; Path=/` }).end(PAGE('set', value));
      return;
    }
    if (request.url?.startsWith('/big')) return void response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE('big', value));
    if (request.url?.startsWith('/zeros')) return void response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE('zeros', value));
    if (request.url?.startsWith('/read')) return void response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE('read', value));
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reports };
}
