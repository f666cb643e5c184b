// Test helper: follows a share link's event stream (`/share/<link>/events`, server-sent events) as
// a viewer's page does, handing on each state the engine sends until stopped.
import type { ViewerState } from '../../src/protocol/index.js';

/** Follows the stream at `url`; answers how to stop. */
export function followShareEvents(url: string, onState: (state: ViewerState) => void): () => void {
  const abort = new AbortController();
  void (async () => {
    const response = await fetch(url, { signal: abort.signal });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
        buffer = buffer.slice(end + 2);
        if (data) onState(JSON.parse(data) as ViewerState);
      }
    }
  })().catch(() => undefined);
  return () => abort.abort();
}
