// Test helper: an engine's log destination that keeps every whole line it is given, for tests that
// read what the engine logged (JSON lines).
import { PassThrough } from 'node:stream';

/** A stream to pass as `logDestination`, and the lines written to it so far (the last, unfinished one held back). */
export function logLines(lines: string[] = []): { destination: PassThrough; lines: string[] } {
  const destination = new PassThrough();
  let partial = '';
  destination.on('data', (chunk: Buffer) => {
    const complete = (partial + chunk.toString('utf8')).split('\n');
    partial = complete.pop()!;
    lines.push(...complete.filter((line) => line !== ''));
  });
  return { destination, lines };
}
