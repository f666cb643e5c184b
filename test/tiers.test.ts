// The test tiers (vite.config.ts, issue 54) hold every test file once: the files the one `node`
// project and `components` took before the split (every test/**/*.test.ts, and
// test/react/**/*.test.tsx), each in exactly one tier or `components`, and none besides; the API
// tests again in `api-postgres`. What each project holds is read from Vitest itself
// (`vitest list --filesOnly`), so a glob that misses a file, or two that both take it, fail here.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const TIERS = ['unit', 'service', 'browser', 'e2e', 'cluster', 'package'];

/** Every test file under test/ by the rule of before the split, relative to the root. */
function testFiles(): string[] {
  return readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .map((path) => `test/${path.split('\\').join('/')}`)
    .filter((path) => path.endsWith('.test.ts') || (path.startsWith('test/react/') && path.endsWith('.test.tsx')))
    .sort();
}

/** Each project's files, as Vitest resolves its include and exclude. */
function projects(): Map<string, string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rbk-tiers-'));
  try {
    const out = join(dir, 'list.json');
    // Vitest's own variables would make the child think it runs inside this worker.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_OPTIONS' && name !== 'TEST'));
    execFileSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'list', '--filesOnly', `--json=${out}`], { cwd: ROOT, env, stdio: 'pipe', timeout: 30_000 });
    const listed = JSON.parse(readFileSync(out, 'utf8')) as { file: string; projectName: string }[];
    const byProject = new Map<string, string[]>();
    for (const { file, projectName } of listed) byProject.set(projectName, [...(byProject.get(projectName) ?? []), relative(ROOT, file).split('\\').join('/')]);
    for (const files of byProject.values()) files.sort();
    return byProject;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the test tiers', () => {
  const files = testFiles();
  const byProject = projects();

  it('are the projects of the run', () => {
    expect([...byProject.keys()].sort()).toEqual([...TIERS, 'api-postgres', 'components'].sort());
    for (const tier of TIERS) expect(byProject.get(tier)?.length ?? 0, tier).toBeGreaterThan(0);
  });

  it('hold every test file in exactly one tier or components, and nothing else', () => {
    const seen = new Map<string, string[]>();
    for (const [project, listed] of byProject) {
      if (project === 'api-postgres') continue;
      for (const file of listed) seen.set(file, [...(seen.get(file) ?? []), project]);
    }
    const twice = [...seen].filter(([, where]) => where.length > 1).map(([file, where]) => `${file}: ${where.join(', ')}`);
    const missing = files.filter((file) => !seen.has(file));
    const extra = [...seen.keys()].filter((file) => !files.includes(file));
    expect({ twice, missing, extra }, 'a test file goes in a tier by its folder (TIER_FOLDERS in vite.config.ts) or by name (TIER_FILES)').toEqual({ twice: [], missing: [], extra: [] });
  });

  it('run the API tests again on Postgres, and the components in jsdom', () => {
    expect(byProject.get('api-postgres')).toEqual(files.filter((file) => file.startsWith('test/api/') && file.endsWith('.test.ts')));
    expect(byProject.get('components')).toEqual(files.filter((file) => file.endsWith('.test.tsx')));
  });
});
