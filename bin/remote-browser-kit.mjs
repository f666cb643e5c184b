#!/usr/bin/env node
// The package's command line: runs the built engine CLI (npm run build makes dist/) once the
// engine's parts, optional peers of the package, are installed; else says how to install them.
import { EnginePartsMissingError, requireEngineParts } from '../dist/engine/parts.js';

try {
  requireEngineParts('The remote-browser-kit command (the engine and its operator tools)');
} catch (error) {
  if (!(error instanceof EnginePartsMissingError)) throw error;
  console.error(`remote-browser-kit: ${error.message}`);
  process.exit(1);
}
const { buildCli } = await import('../dist/engine/cli.js');
await buildCli().parseAsync(process.argv);
