// The published package as a user imports it: every entry of the exports map is built, has
// types, and offers the names the docs promise.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { moduleGraph } from '../../bench/bundle-sizes.js';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, string | { types: string; import: string }>; bin: Record<string, string> };

/** Imports that make a file client code: React itself and the libraries of hooks built on it. */
const REACT_PACKAGES = /^(react|react-dom|react-i18next|@tanstack\/react-query)($|\/)/;

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

  it("keeps 'use client' at the top of the React entry and of every chunk with components or hooks", async () => {
    // Server-component frameworks (Next's app router) treat a file without the directive as
    // server code, where hooks fail: each file of dist/react that imports React needs it.
    const graph = await moduleGraph('dist/react/index.js');
    const clientFiles = [...graph.values()].filter((file) => file.packages.some((name) => REACT_PACKAGES.test(name))).map((file) => file.path);
    expect(clientFiles).toContain('dist/react/index.js');
    const without = clientFiles.filter((path) => !/^["']use client["'];?\s/.test(readFileSync(path, 'utf8')));
    expect(without, "files of dist/react that use React but do not start with 'use client'").toEqual([]);
  });

  it('has the remote-browser-kit command', () => {
    expect(existsSync(pkg.bin['remote-browser-kit']!)).toBe(true);
  });
});
