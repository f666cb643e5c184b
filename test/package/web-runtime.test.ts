// The entries meant for runtimes with Web APIs only (edge functions, workers, Deno, browsers) pull
// in no Node built-in anywhere in their module graph, packages they import included: each built
// entry is bundled by esbuild for the neutral platform with every Node built-in refused.
import { build, type Message } from 'esbuild';
import { isBuiltin } from 'node:module';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Entries that must run without Node. Left out, being Node by design: ./engine (browsers,
 * displays, SQLite), ./node and ./express (they take node:http requests).
 */
const WEB_ENTRIES: Record<string, string> = {
  './server': 'dist/server/index.js',
  './next': 'dist/server/adapters/next.js',
  './hono': 'dist/server/adapters/hono.js',
  './protocol': 'dist/protocol/index.js',
  './core': 'dist/core/index.js',
  './react': 'dist/react/index.js',
};

interface Bundled {
  errors: string[];
  /** Files that went into the bundle, relative to the package, e.g. node_modules/zod/... */
  inputs: string[];
}

async function bundleWithoutNode(entry: string): Promise<Bundled> {
  try {
    const { metafile } = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      platform: 'neutral',
      // The neutral platform reads no package.json main fields by default; a worker bundler does.
      mainFields: ['module', 'main'],
      logLevel: 'silent',
      plugins: [
        {
          name: 'refuse-node-built-ins',
          setup(bundler) {
            bundler.onResolve({ filter: /.*/ }, ({ path, importer }) =>
              isBuiltin(path) ? { errors: [{ text: `${relative('.', importer)} imports the Node built-in "${path}"` }] } : undefined,
            );
          },
        },
      ],
    });
    return { errors: [], inputs: Object.keys(metafile.inputs) };
  } catch (error) {
    const messages = (error as { errors?: Message[] }).errors ?? [];
    return { errors: messages.length > 0 ? messages.map((message) => message.text) : [String(error)], inputs: [] };
  }
}

describe('on a runtime with Web APIs only', () => {
  for (const [entry, file] of Object.entries(WEB_ENTRIES)) {
    it(`remote-browser-kit${entry.slice(1)} bundles with no Node built-in`, async () => {
      const { errors, inputs } = await bundleWithoutNode(file);
      expect(errors, `bundling ${file} for the neutral platform:\n${errors.join('\n')}`).toEqual([]);
      expect(inputs).toContain(file);
    });
  }

  it('follows the server entry into the packages it imports (rate-limiter-flexible, zod)', async () => {
    const { inputs } = await bundleWithoutNode(WEB_ENTRIES['./server']!);
    expect(inputs.some((path) => path.startsWith('node_modules/rate-limiter-flexible/')), 'rate-limiter-flexible is in the bundle of the server entry').toBe(true);
    expect(inputs.some((path) => path.startsWith('node_modules/zod/')), 'zod is in the bundle of the server entry').toBe(true);
  });
});
