import { SessionRuntime } from '/work/main/src/engine/runtime/runtime.ts';
import { createServer } from 'node:http';
const target = createServer((q, r) => r.writeHead(200, {'content-type':'text/html'}).end('<title>Hello</title><p>hi'));
await new Promise<void>((res) => target.listen(0, '127.0.0.1', () => res()));
const port = (target.address() as any).port;
const t0 = performance.now();
const { runtime } = await SessionRuntime.open({ root: '/tmp/rbk-try', egress: { allow: ['127.0.0.1/32'] } });
console.log('open', performance.now() - t0);
for (const browser of (process.argv[2] ?? 'chromium').split(',')) {
  const t1 = performance.now();
  try {
    const s = await runtime.startSession({ browser, url: `http://127.0.0.1:${port}/`, language: 'en', layout: 'us' });
    console.log(browser, 'ready', Math.round(performance.now() - t1), 'uid', s.sandbox.uid, 'ns', s.sandbox.namespacePid);
    if (s.control) console.log(await s.control.evaluate('document.title + " " + document.body.innerText.slice(0,300)'), await s.control.pages());
    if (process.argv[3]) await new Promise((r) => setTimeout(r, Number(process.argv[3])));
  } catch (e) { console.log('ERR', (e as Error).message); }
}
await runtime.close();
target.close();
