// A fresh clone installs: `npm ci` accepts package.json and package-lock.json as they are.
// A machine that already has node_modules never runs `npm ci`, so this is where a lock file
// that only `npm install` would accept (entries the registry cannot serve, dropped) shows.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('the lock file', () => {
  it('is accepted by npm ci on a fresh clone', () => {
    let output = '';
    try {
      output = execFileSync('npm', ['ci', '--dry-run', '--no-audit', '--no-fund'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    } catch (error) {
      const { stderr = '', stdout = '' } = error as { stderr?: string; stdout?: string };
      expect.fail(`npm ci refuses the lock file:\n${stderr.split('\n').filter((line) => line.includes('Missing') || line.includes('Invalid')).join('\n') || stdout + stderr}`);
    }
    expect(output).not.toMatch(/npm error/);
  }, 90_000);
});
