// Size budgets of the browser entries, gzipped, as a host page downloads them: the React entry, the
// lazily loaded noVNC chunk (only when a live session is shown) and the framework-free client.
// Measured by bench/bundle-sizes.ts, the same code as `npm run bench -- bundle`; the budgets sit a
// little above the sizes of the run recorded in docs/benchmarks.md ("The browser bundle").
import { describe, expect, it } from 'vitest';
import { measureBundle, type BundleSizes } from '../../bench/bundle-sizes.js';

const BUDGETS = {
  /**
   * remote-browser-kit/react with every chunk it loads at once: 45,808 B on 2026-11-26 with the
   * people panel (one driver at a time, who watches: issue 36); 42,200 B before it, with the
   * tab strip, the touch zoom and phone keyboard (issue 36) and <SessionReplay> (issue 35); 30,006 B with video mode's hook-up
   * (issue 25: +299 B; the video mode itself is a lazy chunk); 29,707 B on 2026-11-23, after the
   * files in and out (the viewer's Files control, the launcher's downloads, their strings in seven
   * languages: +3,920 B); 25,787 B after the toolbar's sound control (22,958 B on 2026-11-22).
   */
  reactEntry: 52_000,
  /**
   * Chunks loaded with import(), by name: noVNC's `rfb` was 61,244 B; the sound player's `sound`
   * (only for a session with sound) 2,374 B; the video mode's `video` (only where the engine offers
   * video and the browser decodes H.264) 4,793 B with the worker's hand-over and the in-page
   * fallback (issue 37, decisions.md 90; 3,001 B before; the worker is an asset of its own, 2,214 B).
   */
  lazyChunks: { video: 5_200, rfb: 64_000, sound: 2_500 } as Record<string, number>,
  /** remote-browser-kit/core, bundled: 3,409 B with the replay link's client; 3,182 B with tab actions, the editing watch and the recording calls; 2,135 B with the files calls (1,979 B before). */
  core: 3_700,
};

const RAISE = 'If the growth is worth it, raise the budget in test/package/bundle-size.test.ts and the figures in docs/benchmarks.md ("The browser bundle") in the same change.';

describe('the browser bundle', () => {
  let sizes: BundleSizes;
  const measured = async () => (sizes ??= await measureBundle());

  it('keeps the React entry within its budget', async () => {
    const { reactEntry } = await measured();
    expect(reactEntry, `remote-browser-kit/react is ${reactEntry} B gzipped, over its budget of ${BUDGETS.reactEntry} B. ${RAISE}`).toBeLessThanOrEqual(BUDGETS.reactEntry);
  });

  it('keeps noVNC in a lazy chunk of its own, within its budget', async () => {
    const { lazyChunks } = await measured();
    expect(Object.keys(lazyChunks), 'the lazily loaded chunks of dist/react (a chunk without a budget needs one below)').toEqual(Object.keys(BUDGETS.lazyChunks));
    for (const [name, bytes] of Object.entries(lazyChunks)) {
      expect(bytes, `the lazy chunk ${name} is ${bytes} B gzipped, over its budget of ${BUDGETS.lazyChunks[name]} B. ${RAISE}`).toBeLessThanOrEqual(BUDGETS.lazyChunks[name]!);
    }
  });

  it('keeps the framework-free client within its budget', async () => {
    const { core } = await measured();
    expect(core, `remote-browser-kit/core is ${core} B gzipped, over its budget of ${BUDGETS.core} B. ${RAISE}`).toBeLessThanOrEqual(BUDGETS.core);
  });
});
