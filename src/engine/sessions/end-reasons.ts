// Why a session ended, as a category (protocol/webhooks.ts END_CATEGORIES) for metrics, logs and
// webhook events, read from what the engine stores as the end reason. The words are the engine's
// own (sweeper.ts, the runtime's events, the ends of lost and restarted nodes), so each category
// is found by the words that make it; a test holds every source's words to its category.
import type { EndCategory } from '../../protocol/index.js';

/** The category of a session that ended in `status` (suspended, stopping, deleted, error) with `reason`. */
export function endCategory(status: string, reason: string | null): EndCategory {
  const text = reason ?? '';
  if (/\bnode that (ran|started) the session\b|\bengine restarted\b/.test(text)) return 'node-lost';
  if (status === 'error') return 'start-failed';
  if (text === 'removed') return 'removed';
  if (text === 'no viewer for the idle timeout') return 'idle';
  if (text === 'maximum session duration reached') return 'max-duration';
  if (text === 'the plan lapsed') return 'plan-lapsed';
  if (/reached its memory limit/.test(text)) return 'memory-cap';
  // Every other suspension comes from the runtime: its browser, display or a page ended it.
  if (status === 'suspended') return 'browser-exit';
  return 'other';
}
