// No import cycles under src/ (issue 21): every relative import, type-only ones included, followed
// from every file; a cycle is named file by file. The same count as `npx madge --circular src`.
// Folders import one way too (issue 33): no two folders of src/engine (its direct subfolders, each
// channel's own folder channels/<name>/ apart from the seam at channels/, and each room of the
// runtime, runtime/<room>/) import each other. The runtime's rooms import only the rooms before
// them, and the rest of the engine reaches the runtime through runtime/index.ts alone.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const ENGINE = join(SRC, 'engine');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry) && !entry.endsWith('.d.ts') ? [path] : [];
  });
}

/** The files under src/ that `file` imports (or re-exports from) by a relative path. */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specifiers
    .map((specifier) => {
      const base = resolve(dirname(file), specifier).replace(/\.js$/, '');
      return [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((candidate) => known.has(candidate));
    })
    .filter((target): target is string => target !== undefined);
}

function importGraph(): Map<string, string[]> {
  const files = sourceFiles(SRC);
  const known = new Set(files);
  return new Map(files.map((file) => [file, importsOf(file, known)]));
}

function findCycles(): string[][] {
  const graph = importGraph();
  const files = [...graph.keys()];
  const cycles: string[][] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'visiting');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'visiting') cycles.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(SRC, f)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
}

/**
 * The folder of src/engine a file belongs to: its direct subfolder (`sessions`), or a channel's own
 * folder (`channels/rfb`) apart from the seam (`channels`); undefined for the files at src/engine's
 * top (engine.ts, config.ts: the composition root) and outside src/engine.
 */
function folderOf(file: string): string | undefined {
  const parts = relative(ENGINE, file).split(sep);
  if (parts[0] === '..' || parts.length < 2) return undefined;
  return (parts[0] === 'channels' || parts[0] === 'runtime') && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** The runtime's rooms in the order they may import each other: each only the ones before it. */
const RUNTIME_ROOMS = ['sandbox', 'egress', 'display', 'capture', 'browser', 'session', 'pool'];

/** Each pair of folders that import each other, `a <-> b` in order, with one import each way that makes it. */
function findFolderCycles(): Map<string, string[]> {
  const edges = new Map<string, string>(); // 'a -> b' to the first file import that makes it
  for (const [file, targets] of importGraph()) {
    const from = folderOf(file);
    for (const target of targets) {
      const to = folderOf(target);
      if (from === undefined || to === undefined || from === to || edges.has(`${from} -> ${to}`)) continue;
      edges.set(`${from} -> ${to}`, `${relative(ENGINE, file)} -> ${relative(ENGINE, target)}`);
    }
  }
  const pairs = new Map<string, string[]>();
  for (const [edge, because] of edges) {
    const [from, to] = edge.split(' -> ') as [string, string];
    const back = edges.get(`${to} -> ${from}`);
    if (from < to && back !== undefined) pairs.set(`${from} <-> ${to}`, [because, back]);
  }
  return pairs;
}

/** Each import that goes against the runtime's order of rooms, or into the runtime past its entry. */
function runtimeImportsAgainstTheRooms(): string[] {
  const wrong: string[] = [];
  const rank = (folder: string | undefined) => (folder === 'runtime' ? RUNTIME_ROOMS.length : RUNTIME_ROOMS.indexOf(folder?.replace(/^runtime\//, '') ?? ''));
  for (const [file, targets] of importGraph()) {
    const from = folderOf(file);
    for (const target of targets) {
      const to = folderOf(target);
      if (to !== 'runtime' && !to?.startsWith('runtime/')) continue;
      const edge = `${relative(ENGINE, file)} -> ${relative(ENGINE, target)}`;
      const inside = from === 'runtime' || from?.startsWith('runtime/');
      if (!inside) {
        if (relative(ENGINE, target) !== join('runtime', 'index.ts')) wrong.push(edge);
      } else if (from !== to && rank(to) >= rank(from)) wrong.push(edge);
    }
  }
  return wrong;
}

/** The folders that are features with routes of their own, above http/ and cluster/. */
const FEATURE_FOLDERS = ['recordings', 'profiles', 'channels/control'];

/** Each import from http/ or cluster/ into a feature's folder. */
function edgesIntoFeatures(): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of importGraph()) {
    const from = folderOf(file);
    if (from !== 'http' && from !== 'cluster') continue;
    for (const target of targets) if (FEATURE_FOLDERS.includes(folderOf(target) ?? '')) wrong.push(`${relative(ENGINE, file)} -> ${relative(ENGINE, target)}`);
  }
  return wrong;
}

describe('src/', () => {
  it('has no import cycle', () => {
    expect(findCycles()).toEqual([]);
  });

  it('has no folder cycle under src/engine: folders import one way (issue 33)', () => {
    // A pair names one import each way that makes it.
    expect(Object.fromEntries(findFolderCycles())).toEqual({});
  });

  it('reaches the runtime through runtime/index.ts, whose rooms import only the rooms before them', () => {
    expect(readdirSync(join(ENGINE, 'runtime')).filter((entry) => statSync(join(ENGINE, 'runtime', entry)).isDirectory()).sort()).toEqual([...RUNTIME_ROOMS].sort());
    expect(runtimeImportsAgainstTheRooms()).toEqual([]);
  });

  it('serves the features through http/ and cluster/, which import no feature folder: each feature gives its routes (issue 48)', () => {
    expect(edgesIntoFeatures()).toEqual([]);
  });
});
