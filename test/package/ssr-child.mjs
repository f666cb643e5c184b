// Run by ssr.test.ts in a plain `node` process (no Vitest, no jsdom): imports every JavaScript
// entry of the package by its published name, as a server-rendering host does, then renders the
// components with react-dom/server. Prints one JSON object with what happened; never throws.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const result = { globals: { window: typeof window, document: typeof document }, imports: {}, renders: {}, consoleErrors: [] };
const describe = (error) => (error instanceof Error ? error.stack ?? error.message : String(error));

const consoleError = console.error;
console.error = (...args) => result.consoleErrors.push(args.map(String).join(' '));

for (const [entry, target] of Object.entries(pkg.exports)) {
  const file = typeof target === 'string' ? target : target.import;
  if (!file || !/\.[cm]?js$/.test(file)) continue;
  // The package's own name: Node resolves it through the exports map (self-reference).
  const specifier = `${pkg.name}${entry.slice(1)}`;
  try {
    const module = await import(specifier);
    result.imports[entry] = { ok: true, names: Object.keys(module).length };
  } catch (error) {
    result.imports[entry] = { ok: false, error: describe(error) };
  }
}

try {
  const { createElement: h } = await import('react');
  const { renderToString } = await import('react-dom/server');
  const kit = await import(`${pkg.name}/react`);
  const inProvider = (child) => h(kit.RemoteBrowserProvider, { endpoint: '/api/remote-browser', language: 'de' }, child);
  const elements = {
    SessionLauncher: inProvider(h(kit.SessionLauncher, { defaultUrl: 'https://example.com' })),
    UsageMeters: inProvider(h(kit.UsageMeters)),
    ShareViewer: inProvider(h(kit.ShareViewer, { shareUrl: 'https://share.example.com/de/s?abcDEF123' })),
  };
  for (const [name, element] of Object.entries(elements)) {
    try {
      result.renders[name] = { ok: true, html: renderToString(element) };
    } catch (error) {
      result.renders[name] = { ok: false, error: describe(error) };
    }
  }
} catch (error) {
  result.renders.setup = { ok: false, error: describe(error) };
}

console.error = consoleError;
process.stdout.write(JSON.stringify(result));
