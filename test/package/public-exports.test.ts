// The public API at a glance: the names each JavaScript entry of the exports map offers, compared
// with test/package/public-exports.json, so that adding, renaming or removing an export shows up
// in review as a change to that file. Types are not listed: they leave no trace in the built files.
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const SNAPSHOT = 'test/package/public-exports.json';
const UPDATE = 'RBK_UPDATE_PUBLIC_EXPORTS';
const HOW_TO_UPDATE = `If the change is deliberate, run \`npm run build && ${UPDATE}=1 npx vitest run test/package/public-exports.test.ts --project package\` and commit ${SNAPSHOT}.`;

type ExportTarget = string | { types?: string; import?: string };
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, ExportTarget> };

/** The exports map's entries whose target is JavaScript, with the built file each one loads. */
function javascriptEntries(): [entry: string, file: string][] {
  return Object.entries(pkg.exports).flatMap(([entry, target]): [string, string][] => {
    const file = typeof target === 'string' ? target : target.import;
    return file && /\.[cm]?js$/.test(file) ? [[entry, file]] : [];
  });
}

async function publicExports(): Promise<Record<string, string[]>> {
  const names: Record<string, string[]> = {};
  for (const [entry, file] of javascriptEntries()) {
    const module = (await import(`../../${file}`)) as Record<string, unknown>;
    names[entry] = Object.keys(module).sort();
  }
  return names;
}

/** `+ ./core: name` for each name added, `- ...` for each removed, entries included. */
function describeChange(before: Record<string, string[]>, after: Record<string, string[]>): string[] {
  const lines: string[] = [];
  for (const entry of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const was = new Set(before[entry] ?? []);
    const is = new Set(after[entry] ?? []);
    if (!(entry in before)) lines.push(`+ entry ${entry}`);
    if (!(entry in after)) lines.push(`- entry ${entry}`);
    for (const name of is) if (!was.has(name)) lines.push(`+ ${entry}: ${name}`);
    for (const name of was) if (!is.has(name)) lines.push(`- ${entry}: ${name}`);
  }
  return lines;
}

describe('the public exports', () => {
  it(`match ${SNAPSHOT}`, async () => {
    const current = await publicExports();
    expect(Object.keys(current)).toContain('./react');
    if (process.env[UPDATE]) {
      writeFileSync(SNAPSHOT, `${JSON.stringify(current, null, 2)}\n`);
      return;
    }
    const committed = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, string[]>;
    const change = describeChange(committed, current);
    expect(change, `The public API differs from ${SNAPSHOT}:\n${change.join('\n')}\n${HOW_TO_UPDATE}`).toEqual([]);
  });
});
