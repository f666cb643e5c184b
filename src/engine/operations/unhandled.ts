// What the engine's own process does with a promise rejection nobody handled: it logs it and
// goes on (decisions.md 78). Node's default ends the process, and with it every session of the
// node; every request and upgrade handler contains its own errors, so a rejection that still
// gets here is a defect to log and fix, never a reason for one client to stop the node.
// `serve` and `demo` install it; an application that embeds createEngine() keeps its own policy.
import type { Logger } from './logger.js';

export function surviveUnhandledRejections(logger: Logger): () => void {
  const logged = (reason: unknown) => logger.error({ err: reason }, 'unhandled promise rejection; the engine goes on');
  process.on('unhandledRejection', logged);
  return () => void process.off('unhandledRejection', logged);
}
