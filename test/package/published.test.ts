// The tarball `npm publish` would upload, checked by the tools package users' own tooling agrees
// with: publint (package.json fields, the exports map against the files actually packed) and
// Are the Types Wrong (that TypeScript resolves every entry to its types as a user's project would).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let dir = '';
let tarball = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rbk-pack-'));
  // --ignore-scripts: the test checks what dist/ holds now (`npm test` has just built it).
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as { filename: string }[];
  tarball = join(dir, packed!.filename);
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('passes publint, warnings included', async () => {
    const data = readFileSync(tarball);
    const { messages, pkg } = await publint({ pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) }, strict: true });
    const found = messages.map((message) => `${message.type}: ${formatMessage(message, pkg, { color: false }) ?? message.code}`);
    expect(messages.filter((message) => message.type !== 'suggestion'), `publint found:\n${found.join('\n')}`).toEqual([]);
  });

  it('resolves to its types in every entry (Are the Types Wrong, ESM-only profile)', () => {
    const args = [
      tarball,
      // The package is ESM only ("type": "module", `import` conditions only): node10 resolution and
      // require() from CommonJS are not supported, which is what this profile leaves out.
      '--profile',
      'esm-only',
      // A stylesheet, not a module: there are no types to resolve for it.
      '--exclude-entrypoints',
      './styles.css',
      '--format',
      'ascii',
      '--no-color',
    ];
    let output = '';
    let failed = false;
    try {
      output = execFileSync(join('node_modules', '.bin', 'attw'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      output = stdout + stderr;
      failed = true;
    }
    expect(failed, `attw found problems:\n${output}`).toBe(false);
    // It looked at the entries (a run that checked nothing would also exit 0).
    expect(output).toContain('"remote-browser-kit/react"');
    expect(output).toContain('"remote-browser-kit/server"');
  }, 90_000);
});
