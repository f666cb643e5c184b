// The check of the engine's parts (optional peers, decisions.md 44): what it finds missing and the
// message that says what to install. The packed package installed without them is
// test/package/consumer-install.test.ts.
import { describe, expect, it } from 'vitest';
import { ENGINE_PARTS, EnginePartsMissingError, installCommand, missingEngineParts, POSTGRES_PART, requireEngineParts } from '../../src/engine/parts.js';

const ABSENT = { name: 'rbk-no-such-package', install: 'rbk-no-such-package@1' };

describe("the engine's parts", () => {
  it('are all here in this repository, the Postgres driver included', () => {
    expect(missingEngineParts([...ENGINE_PARTS, POSTGRES_PART])).toEqual([]);
    expect(() => requireEngineParts('remote-browser-kit/engine')).not.toThrow();
  });

  it('give one install command with the major version of each', () => {
    expect(installCommand(ENGINE_PARTS)).toBe('npm install better-sqlite3@12 commander@14 ipaddr.js@2 pino@10 prom-client@15 proxy-chain@3 ws@8');
    expect(installCommand([POSTGRES_PART])).toBe('npm install pg@8');
  });

  it('name only what is missing, with the command for exactly that', () => {
    let thrown: unknown;
    try {
      requireEngineParts('remote-browser-kit/engine', [ENGINE_PARTS[0]!, ABSENT]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(EnginePartsMissingError);
    const error = thrown as EnginePartsMissingError;
    expect(error.code).toBe('RBK_ENGINE_PARTS_MISSING');
    expect(error.missing).toEqual([ABSENT]);
    expect(error.command).toBe('npm install rbk-no-such-package@1');
    expect(error.message).toBe(
      'remote-browser-kit/engine needs a package this app has not installed: rbk-no-such-package. Install it next to remote-browser-kit with:\n' +
        '  npm install rbk-no-such-package@1\n' +
        `(the proxy route and the components need none of the engine's parts; see "Installing" in the README of remote-browser-kit)`,
    );
  });
});
