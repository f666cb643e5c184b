// The browser entries as built in dist/: their module graphs (read by esbuild) and gzipped sizes.
// Shared by `npm run bench -- bundle` and the size budgets and 'use client' checks in test/package/.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** Left to the host app by the React entry, so not part of its size. */
export const HOST_PACKAGES = ['react', 'react-dom', '@tanstack/react-query', 'i18next', 'react-i18next'];

export interface ModuleFile {
  /** Relative to the working directory, e.g. `dist/react/index.js`. */
  path: string;
  /** Files of the package it imports with `import ... from` (loaded with it). */
  staticImports: string[];
  /** Files of the package it loads with `import()` (loaded later, if ever). */
  dynamicImports: string[];
  /** Packages it imports (react, zod...). */
  packages: string[];
}

/** Every file an entry reaches through relative imports, static or dynamic; packages are not followed. */
export async function moduleGraph(entry: string): Promise<Map<string, ModuleFile>> {
  const { metafile } = await build({ entryPoints: [entry], bundle: true, write: false, metafile: true, packages: 'external', format: 'esm', platform: 'neutral', logLevel: 'silent' });
  const graph = new Map<string, ModuleFile>();
  for (const [path, input] of Object.entries(metafile.inputs)) {
    const own = input.imports.filter((i) => !i.external);
    graph.set(path, {
      path,
      staticImports: own.filter((i) => i.kind === 'import-statement').map((i) => i.path),
      dynamicImports: own.filter((i) => i.kind === 'dynamic-import').map((i) => i.path),
      packages: input.imports.filter((i) => i.external).map((i) => i.path),
    });
  }
  return graph;
}

/** The entry and what it imports statically: what a page downloads when it imports the entry. */
function staticClosure(graph: Map<string, ModuleFile>, entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const next of graph.get(path)?.staticImports ?? []) visit(next);
  };
  visit(entry);
  return seen;
}

const gzipBytes = (data: string | Uint8Array) => gzipSync(data).length;

export interface BundleSizes {
  /** remote-browser-kit/react: dist/react/index.js and any chunk it imports statically, each gzipped. */
  reactEntry: number;
  /** Chunks of dist/react reached only through import() (noVNC's `rfb`), by name without the hash. */
  lazyChunks: Record<string, number>;
  /**
   * remote-browser-kit/core: dist/core/index.js with the package files it imports, bundled by
   * esbuild the way the lib build treats the React entry (identifiers and syntax minified,
   * whitespace kept), then gzipped. tsc emits it as separate files; a host's bundler joins them.
   */
  core: number;
  /** remote-browser-kit/styles.css. */
  styles: number;
  /**
   * remote-browser-kit/element (issue 44) as one script for a page without a bundler: dist/element
   * with everything it imports, zod included, bundled and minified by esbuild, gzipped; and its
   * own code alone (zod left to the host's bundler).
   */
  element: { script: number; own: number };
}

/** Gzipped sizes (Node's zlib, default level) of the browser entries in `dist` as last built. */
export async function measureBundle(dist = 'dist'): Promise<BundleSizes> {
  const entry = join(dist, 'react', 'index.js');
  const graph = await moduleGraph(entry);
  const loaded = staticClosure(graph, entry);
  const reactEntry = [...loaded].reduce((sum, path) => sum + gzipBytes(readFileSync(path)), 0);
  const lazyChunks: Record<string, number> = {};
  const lazyRoots = new Set([...graph.values()].flatMap((file) => file.dynamicImports).filter((path) => !loaded.has(path)));
  for (const root of lazyRoots) {
    const files = [...staticClosure(graph, root)].filter((path) => !loaded.has(path));
    lazyChunks[basename(root).replace(/-[\w-]+\.js$/, '')] = files.reduce((sum, path) => sum + gzipBytes(readFileSync(path)), 0);
  }
  const core = await build({
    entryPoints: [join(dist, 'core', 'index.js')],
    bundle: true,
    write: false,
    packages: 'external',
    format: 'esm',
    platform: 'neutral',
    minifyIdentifiers: true,
    minifySyntax: true,
    logLevel: 'silent',
  });
  const element = async (packages: 'external' | 'bundle') =>
    gzipBytes((await build({ entryPoints: [join(dist, 'element', 'index.js')], bundle: true, write: false, packages, format: 'esm', platform: 'browser', minify: true, logLevel: 'silent' })).outputFiles[0]!.contents);
  return {
    reactEntry,
    lazyChunks,
    core: gzipBytes(core.outputFiles[0]!.contents),
    styles: gzipBytes(readFileSync(join(dist, 'styles.css'))),
    element: { script: await element('bundle'), own: await element('external') },
  };
}
