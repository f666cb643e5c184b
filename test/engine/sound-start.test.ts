// A session whose sound server cannot start runs without sound, and the operator hears why once
// (src/engine/runtime/capture/sound.ts): through the engine's logger (the runtime's `warn`), not stray
// console lines. The fault is real: a session directory too long for the server's socket.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openHostSandbox } from '../../src/engine/runtime/sandbox/session-sandbox.js';
import { probeSound, startSessionSound } from '../../src/engine/runtime/capture/sound.js';

const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('a sound server that cannot start', () => {
  it.runIf(probeSound().available)('leaves the session without sound and tells the operator once, through the given warn', async () => {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    // A data directory whose session directories are too long for a socket path (108 bytes).
    const sessions = await mkdtemp(join(tmpdir(), `rbk-sound-start-${'x'.repeat(100)}-`));
    dirs.push(sessions);
    for (const id of ['first-session', 'second-session']) {
      const sandbox = await openHostSandbox(join(sessions, id), 'http://127.0.0.1:9');
      expect(await startSessionSound(sandbox, {}, { warn })).toBeNull();
    }
    // Two sessions, one reason: said once, naming the directory they share.
    expect(warnings).toEqual([`sessions run without sound: session directories under ${sessions} are too long for the sound server's socket: choose a shorter data directory`]);
  });
});
