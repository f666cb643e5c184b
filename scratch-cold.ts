import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { SessionRuntime } from './src/engine/runtime/runtime.ts';
const server = createServer((req, res) => res.writeHead(200, {'content-type':'text/html'}).end('<title>Hello</title>'));
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(server.address() as any).port}`;
const root = await mkdtemp(join(tmpdir(), 'rbk-cold-'));
const { runtime } = await SessionRuntime.open({ root, egress: { allow: ['127.0.0.1/32'] } });
await runtime.stopSession((await runtime.startSession({ browser: 'chromium', url: origin, language: 'en', layout: 'us' })).id);
const times: number[] = [];
for (let i = 0; i < Number(process.env.N ?? 8); i++) {
  const s = await runtime.startSession({ browser: 'chromium', url: origin, language: 'en', layout: 'us' });
  times.push(s.readyMs);
  await new Promise((r) => setTimeout(r, 200));
  await runtime.stopSession(s.id);
}
times.sort((a, b) => a - b);
console.log(process.env.LABEL, 'p50', times[Math.floor(times.length / 2)].toFixed(0), 'all', times.map((t) => t.toFixed(0)).join(' '));
await runtime.close(); server.close(); await rm(root, { recursive: true, force: true });
