// `npm run bench -- bundle`: gzipped sizes of the browser entry (remote-browser-kit/react, with
// react, react-dom, react-query and i18next left to the host), of the lazily loaded VNC chunk, of
// the framework-free client (remote-browser-kit/core), of the styles and of the framework-free
// element (remote-browser-kit/element). The measuring is in
// bundle-sizes.ts, which the size budgets in test/package/bundle-size.test.ts use too.
import { execFileSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { HOST_PACKAGES, measureBundle } from './bundle-sizes.js';
import { report } from './stats.js';

export async function bundleBench(): Promise<void> {
  // The steps of `npm run build` these entries come from: tsc for core, the lib build for react,
  // then react's declarations again, since the lib build empties dist/react (dist stays publishable).
  const run = (command: string, args: string[]) => execFileSync('npx', [command, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  run('tsc', ['-p', 'tsconfig.build.json']);
  run('vite', ['build', '--mode', 'lib', '--logLevel', 'error']);
  run('tsc', ['-p', 'tsconfig.types.json']);
  copyFileSync('src/react/styles.css', 'dist/styles.css');
  const sizes = await measureBundle();
  report('bundle', 'browser_entry_gzip_bytes', sizes.reactEntry, 'B', { entry: 'remote-browser-kit/react', external: HOST_PACKAGES });
  for (const [chunk, bytes] of Object.entries(sizes.lazyChunks)) report('bundle', 'viewer_chunk_gzip_bytes', bytes, 'B', { chunk, loaded: 'lazily, when a live session is shown' });
  report('bundle', 'core_entry_gzip_bytes', sizes.core, 'B', { entry: 'remote-browser-kit/core', bundled: 'esbuild, identifiers and syntax minified' });
  report('bundle', 'styles_gzip_bytes', sizes.styles, 'B', { file: 'remote-browser-kit/styles.css' });
  report('bundle', 'element_script_gzip_bytes', sizes.element.script, 'B', { entry: 'remote-browser-kit/element', bundled: 'esbuild, minified, zod included (one script for a page without a bundler)' });
  report('bundle', 'element_own_gzip_bytes', sizes.element.own, 'B', { entry: 'remote-browser-kit/element', bundled: 'esbuild, minified, zod left to the host' });
}
