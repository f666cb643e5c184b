// `npm run bench -- bundle`: gzipped sizes of the browser entry (remote-browser-kit/react, with
// react, react-dom, react-query and i18next left to the host) and of the lazily loaded VNC chunk.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { report } from './stats.js';

export async function bundleBench(): Promise<void> {
  execFileSync('npx', ['vite', 'build', '--mode', 'lib', '--logLevel', 'error'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const dir = join('dist', 'react');
  const size = (file: string) => gzipSync(readFileSync(join(dir, file))).length;
  const chunks = readdirSync(dir).filter((name) => name.endsWith('.js') && name !== 'index.js');
  report('bundle', 'browser_entry_gzip_bytes', size('index.js'), 'B', { entry: 'remote-browser-kit/react', external: ['react', 'react-dom', '@tanstack/react-query', 'i18next', 'react-i18next'] });
  for (const chunk of chunks) report('bundle', 'viewer_chunk_gzip_bytes', size(chunk), 'B', { chunk: chunk.replace(/-[\w-]+\.js$/, ''), loaded: 'lazily, when a live session is shown' });
  report('bundle', 'styles_gzip_bytes', gzipSync(readFileSync(join('src', 'react', 'styles.css'))).length, 'B', { file: 'remote-browser-kit/styles.css' });
}
