// Video watchers in a process of their own, for the density bench (bench/viewer-video-density.ts):
// the watchers' reading and receipts then compete with the engine for the CPU as a viewer on the
// same machine would, but not for the engine's event loop (where watchers in the engine's own
// process made late receipts, and so dropped frames, more likely than real viewers would).
// Started with fork(); told over IPC `{ watch: url, receipts }` (answers `{ watching: index }`)
// and `{ counts: true }` (answers each watcher's frames and latest bit rate so far).
import { watchVideo, type VideoClient } from '../test/helpers/video-client.js';

export type WatchersRequest = { watch: string; receipts: boolean } | { counts: true };
export type WatchersAnswer = { watching: number } | { error: string } | { counts: { frames: number; formats: number; kbps: number }[] };

const watchers: VideoClient[] = [];
const answer = (message: WatchersAnswer) => process.send!(message);

process.on('message', (request: WatchersRequest) => {
  if ('watch' in request) {
    watchVideo(request.watch, { receipts: request.receipts }).then(
      (watcher) => answer({ watching: watchers.push(watcher) - 1 }),
      (error: Error) => answer({ error: error.message }),
    );
  } else {
    answer({ counts: watchers.map((w) => ({ frames: w.frames.length, formats: w.formats.length, kbps: w.formats.at(-1)?.bitrateKbps ?? 0 })) });
  }
});
process.on('disconnect', () => {
  for (const watcher of watchers) watcher.close();
  process.exit(0);
});
