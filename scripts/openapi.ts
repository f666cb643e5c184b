// Writes docs/openapi.json from the protocol schemas (`npm run openapi`); a test checks it is current.
import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../src/engine/http/openapi.js';

writeFileSync(new URL('../docs/openapi.json', import.meta.url), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log('wrote docs/openapi.json');
