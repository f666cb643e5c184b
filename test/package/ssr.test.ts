// Safe for server-side rendering: every entry imports in plain Node with no window or document
// (a Next or Remix server, a worker building pages), and the components render to HTML there with
// react-dom/server. Runs ssr-child.mjs in a child `node` process, away from Vitest's environment.
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';

interface Outcome {
  ok: boolean;
  error?: string;
  html?: string;
}
interface ChildResult {
  globals: { window: string; document: string };
  imports: Record<string, Outcome>;
  renders: Record<string, Outcome>;
  consoleErrors: string[];
}

let result: ChildResult;

beforeAll(() => {
  const output = execFileSync(process.execPath, ['test/package/ssr-child.mjs'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  result = JSON.parse(output) as ChildResult;
}, 90_000);

const failures = (outcomes: Record<string, Outcome>) =>
  Object.entries(outcomes)
    .filter(([, outcome]) => !outcome.ok)
    .map(([name, outcome]) => `${name}: ${outcome.error}`);

describe('under Node without a DOM', () => {
  it('has no window or document to lean on', () => {
    expect(result.globals).toEqual({ window: 'undefined', document: 'undefined' });
  });

  it('imports every entry of the package', () => {
    expect(Object.keys(result.imports)).toEqual(expect.arrayContaining(['./react', './core', './server', './node', './express', './next', './hono', './protocol']));
    const failed = failures(result.imports);
    expect(failed, `entries that throw when imported without a DOM:\n${failed.join('\n\n')}`).toEqual([]);
  });

  it('renders SessionLauncher, UsageMeters and ShareViewer to HTML inside the provider', () => {
    const failed = failures(result.renders);
    expect(failed, `components that throw in renderToString:\n${failed.join('\n\n')}`).toEqual([]);
    expect(result.renders.SessionLauncher?.html).toContain('class="rbk-root rbk-launcher"');
    expect(result.renders.UsageMeters?.html).toContain('class="rbk-root rbk-meters"');
    expect(result.renders.ShareViewer?.html).toContain('class="rbk-root rbk-viewer"');
  });

  it('logs no errors while importing and rendering', () => {
    expect(result.consoleErrors).toEqual([]);
  });
});
