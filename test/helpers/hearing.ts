// Test helper for hearing what a page in a real browser plays: an init script that taps every
// node connected to the page's speakers with an AnalyserNode, and a reading of the loudest
// frequency and sample heard now. Used by the viewer's sound e2e tests.
import type { Page } from 'playwright-core';

/** Taps every node the page connects to its speakers with an AnalyserNode: what the listener hears. */
export const SPEAKER_TAP = `(() => {
  const connect = AudioNode.prototype.connect;
  window.__taps = [];
  AudioNode.prototype.connect = function (target, ...rest) {
    if (target instanceof AudioDestinationNode) {
      const analyser = this.context.createAnalyser();
      analyser.fftSize = 8192;
      analyser.smoothingTimeConstant = 0;
      connect.call(this, analyser);
      window.__taps.push(analyser);
    }
    return connect.call(this, target, ...rest);
  };
})();`;

/** The loudest frequency the page plays now, and its loudest sample (0 is silence, and nothing tapped yet). */
export function heardNow(page: Page): Promise<{ peakHz: number; level: number }> {
  return page.evaluate(() => {
    const analyser = (window as unknown as { __taps: AnalyserNode[] }).__taps.at(-1);
    if (!analyser) return { peakHz: 0, level: 0 };
    const spectrum = new Float32Array(analyser.frequencyBinCount);
    analyser.getFloatFrequencyData(spectrum);
    let peak = 0;
    for (let bin = 1; bin < spectrum.length; bin++) if (spectrum[bin]! > spectrum[peak]!) peak = bin;
    const wave = new Float32Array(analyser.fftSize);
    analyser.getFloatTimeDomainData(wave);
    return { peakHz: (peak * analyser.context.sampleRate) / analyser.fftSize, level: Math.max(...wave.map(Math.abs)) };
  });
}
