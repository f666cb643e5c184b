#!/usr/bin/env node
// The package's command line: runs the built engine CLI (npm run build makes dist/).
import { buildCli } from '../dist/engine/cli.js';

await buildCli().parseAsync(process.argv);
