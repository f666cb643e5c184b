import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createEngine } from '../src/engine/engine.js';

const clip = process.argv[2] ?? '/tmp/rbk-video/card.mp4';
const page = (process.argv[3] ?? 'video');
const site = createServer((req, res) => {
  if (req.url === '/clip.mp4') { res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': statSync(clip).size }); return void createReadStream(clip).pipe(res); }
  if (req.url === '/spinner') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><body style="margin:0;font:20px sans-serif"><p>Text here</p><div id=s style="width:40px;height:40px;background:red"></div><script>let i=0;setInterval(()=>{i++;document.getElementById("s").style.transform="rotate("+i*10+"deg)"},33)</script>');
  if (req.url === '/static') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><body style="margin:0;font:20px sans-serif"><p>Static text here</p>');
  res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><body style="margin:0;background:#000;overflow:hidden"><video src="/clip.mp4" autoplay muted loop style="width:100vw;height:100vh;display:block"></video>');
});
await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
const dir = await mkdtemp(join(tmpdir(), 'rbk-video-smoke-'));
const engine = await createEngine({ dataDir: dir, port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, video: {} } as never });
try {
  const key = (await engine.accounts.create({ contact: 'b@example.com', plans: ['team'] })).apiKey.key;
  const created = await (await fetch(`${engine.url}/v8/vm/create`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: JSON.stringify({ browser: 'chromium', url: `${origin}/${page}` }) })).json() as any;
  const linkId = new URL(created.shareUrl).search.slice(1);
  console.log('share', created.shareUrl, linkId);
  for (let i = 0; i < 100; i++) { const s = await (await fetch(`${engine.url}/share/${linkId}`)).json() as any; if (s.state === 'running') { console.log(s); break; } await new Promise((r) => setTimeout(r, 200)); }
  await new Promise((r) => setTimeout(r, 3000));
  const ws = new WebSocket(`${engine.url.replace('http', 'ws')}/share/${linkId}/video`);
  const sizes: number[] = []; let keys = 0; let first = 0; const t0 = Date.now();
  ws.on('message', (data: Buffer, isBinary) => {
    if (!isBinary) { console.log('format', data.toString().slice(0, 80)); return; }
    if (!first) first = Date.now() - t0;
    sizes.push(data.length); if (data[0] === 1) keys++;
  });
  ws.on('close', (code, reason) => console.log('closed', code, reason.toString()));
  await new Promise((r) => setTimeout(r, 2000));
  const video = (engine as any);
  const start = sizes.length; const bytesStart = sizes.reduce((a, b) => a + b, 0);
  const pids = (await import('node:child_process')).execSync(`pgrep -f "ffmpeg.*x11grab" || true`).toString().trim().split('\n').filter(Boolean);
  const ticks = async () => { let t = 0; for (const pid of pids) { try { const f = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' '); t += Number(f[11]) + Number(f[12]); } catch {} } return t; };
  const t1 = await ticks();
  await new Promise((r) => setTimeout(r, 5000));
  const t2 = await ticks();
  const n = sizes.length - start; const bytes = sizes.reduce((a, b) => a + b, 0) - bytesStart;
  console.log({ firstFrameMs: first, fps: n / 5, kbitPerS: (bytes * 8) / 5 / 1000, keys, cpuPercent: (t2 - t1) / 5, pids, sample: sizes.slice(-40) });
  ws.close();
  await new Promise((r) => setTimeout(r, 500));
} finally {
  await engine.close(); site.close();
}
