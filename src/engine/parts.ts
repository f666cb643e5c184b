// The engine's parts: the packages only the engine runs on, optional peers of remote-browser-kit
// (docs/decisions.md 44) so that an app with only the proxy route and the components installs
// none of them. Checked before any module that imports them loads, to name what to install.
// Imports nothing but Node's own modules: it must load when every part is missing.
import { createRequire } from 'node:module';

export interface EnginePart {
  /** The npm package. */
  name: string;
  /** What `npm install` is given: the major version package.json's peer range allows. */
  install: string;
}

/** What every engine entry (`remote-browser-kit/engine`, the `remote-browser-kit` command) loads. */
export const ENGINE_PARTS: readonly EnginePart[] = [
  { name: 'better-sqlite3', install: 'better-sqlite3@12' },
  { name: 'commander', install: 'commander@14' },
  { name: 'ipaddr.js', install: 'ipaddr.js@2' },
  { name: 'pino', install: 'pino@10' },
  { name: 'prom-client', install: 'prom-client@15' },
  { name: 'proxy-chain', install: 'proxy-chain@3' },
  { name: 'ws', install: 'ws@8' },
];

/** The Postgres driver: loaded only when a postgres:// database is configured. */
export const POSTGRES_PART: EnginePart = { name: 'pg', install: 'pg@8' };

/** `npm install ...` for these parts. */
export function installCommand(parts: readonly EnginePart[]): string {
  return `npm install ${parts.map((part) => part.install).join(' ')}`;
}

/** Thrown when an engine entry loads without the parts it runs on; the message says what to install. */
export class EnginePartsMissingError extends Error {
  readonly code = 'RBK_ENGINE_PARTS_MISSING';

  constructor(
    readonly missing: readonly EnginePart[],
    readonly command: string,
    what: string,
  ) {
    super(
      `${what} needs ${missing.length === 1 ? 'a package' : 'packages'} this app has not installed: ${missing.map((part) => part.name).join(', ')}. ` +
        `Install ${missing.length === 1 ? 'it' : 'them'} next to remote-browser-kit with:\n  ${command}\n` +
        `(the proxy route and the components need none of the engine's parts; see "Installing" in the README of remote-browser-kit)`,
    );
    this.name = 'EnginePartsMissingError';
  }
}

// Resolved from this file, as the engine's own imports are: the app's node_modules above the package.
const resolveFromEngine = createRequire(import.meta.url).resolve;

function isInstalled(name: string): boolean {
  try {
    resolveFromEngine(name);
    return true;
  } catch {
    return false;
  }
}

/** The parts of `parts` that cannot be found from the engine's files. */
export function missingEngineParts(parts: readonly EnginePart[] = ENGINE_PARTS): EnginePart[] {
  return parts.filter((part) => !isInstalled(part.name));
}

/** Throws EnginePartsMissingError naming the missing parts of `parts`; `what` is what needs them. */
export function requireEngineParts(what: string, parts: readonly EnginePart[] = ENGINE_PARTS): void {
  const missing = missingEngineParts(parts);
  if (missing.length > 0) throw new EnginePartsMissingError(missing, installCommand(missing), what);
}
