// The ports the engine itself listens on, on this host: its public port (the node link's too), its
// operator listener, each unconfined session's egress route and DevTools, and whatever a program
// serving beside it adds (the demo's page). No session reaches them, whatever `egress.allow` says
// (decisions.md 120): the egress route refuses this host's addresses on these ports.

export class EnginePorts {
  // A count per port: two listeners can share a port on different addresses, and one closing
  // must not open the other.
  readonly #listeners = new Map<number, number>();

  /**
   * Adds a port once its listener listens (a port 0 is known only then); the function returned
   * takes it away again as that listener closes (calling it twice does nothing more).
   */
  add(port: number): () => void {
    if (!Number.isInteger(port) || port <= 0 || port > 65_535) return () => undefined;
    this.#listeners.set(port, (this.#listeners.get(port) ?? 0) + 1);
    let added = true;
    return () => {
      if (!added) return;
      added = false;
      const left = (this.#listeners.get(port) ?? 1) - 1;
      if (left > 0) this.#listeners.set(port, left);
      else this.#listeners.delete(port);
    };
  }

  has(port: number): boolean {
    return this.#listeners.has(port);
  }

  /** The ports now, lowest first: what an operator's diagnostics show. */
  list(): number[] {
    return [...this.#listeners.keys()].sort((a, b) => a - b);
  }
}

/** The port a URL names, or its scheme's default (http 80, https 443); undefined when it is not a URL. */
export function portOfUrl(text: string): number | undefined {
  try {
    const url = new URL(text);
    if (url.port !== '') return Number(url.port);
    return url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : url.protocol === 'http:' || url.protocol === 'ws:' ? 80 : undefined;
  } catch {
    return undefined;
  }
}
