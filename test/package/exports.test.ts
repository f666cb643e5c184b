// The published package as a user imports it: every entry of the exports map is built, has
// types, and offers the names the docs promise.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, string | { types: string; import: string }>; bin: Record<string, string> };

const PROMISED: Record<string, string[]> = {
  './protocol': ['parseCreateRequest', 'createRequestSchema', 'SHARE_LANGUAGES', 'parseShareLink'],
  './engine': ['createEngine', 'SessionRuntime', 'runDoctor'],
  './server': ['createProxyRoute', 'createServiceClient', 'engineService', 'RemoteBrowserError'],
  './core': ['createRemoteBrowserClient', 'RemoteBrowserClientError', 'remoteBrowserKeys', 'sessionQuery'],
  './react': ['RemoteBrowserProvider', 'SessionLauncher', 'ShareViewer', 'UsageMeters', 'useSession', 'useCreateSession'],
};

describe('the exports map', () => {
  for (const [entry, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') {
      it(`${entry} points at a file`, () => expect(existsSync(target)).toBe(true));
      continue;
    }
    it(`${entry} is built, typed, and offers what the docs promise`, async () => {
      expect(existsSync(target.import)).toBe(true);
      expect(existsSync(target.types)).toBe(true);
      const module = (await import(`../../${target.import}`)) as Record<string, unknown>;
      for (const name of PROMISED[entry] ?? []) expect(module, `${entry} exports ${name}`).toHaveProperty(name);
    });
  }

  it("keeps 'use client' at the top of the React entry", () => {
    expect(readFileSync('dist/react/index.js', 'utf8').startsWith('"use client"')).toBe(true);
  });

  it('has the remote-browser-kit command', () => {
    expect(existsSync(pkg.bin['remote-browser-kit']!)).toBe(true);
  });
});
