// The engine the video tests share (issue 25): a real engine with video on, in a data directory
// of its own, allowed to reach the loopback video site serving `pages`, and an account's key.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import type { VideoSettings } from '../../src/engine/runtime/capture/video.js';
import { startVideoSite, type VideoSite } from './video-site.js';

export interface VideoEngine {
  engine: Engine;
  site: VideoSite;
  /** An API key of a `pro` account. */
  key: string;
  /** Stops the engine and the site and removes the data directory. */
  close(): Promise<void>;
}

/** Starts the site, then the engine (`video` settings as given, defaults otherwise); `name` names the directory and the account. */
export async function startVideoEngine(name: string, pages: Record<string, string>, video: Partial<VideoSettings> = {}): Promise<VideoEngine> {
  const dir = await mkdtemp(join(tmpdir(), `rbk-${name}-`));
  const site = await startVideoSite(pages);
  const engine = await createEngine({ dataDir: dir, port: 0, config: { egress: { allow: ['127.0.0.1/32'] }, rateLimit: { requests: 100_000, perSeconds: 1 }, standby: { afterSeconds: false }, video } });
  const key = (await engine.accounts.create({ contact: `${name}@example.com`, plans: ['pro'] })).apiKey.key;
  return {
    engine,
    site,
    key,
    async close() {
      await engine.close();
      await site.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
