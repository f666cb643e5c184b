// The subscribe/getState shape of the core's state holders (as query-core's Subscribable): React
// binds them with useSyncExternalStore; any other UI can too. Each change is a new snapshot.
export class Subscribable<T extends object> {
  #state: T;
  readonly #listeners = new Set<() => void>();

  constructor(initial: T) {
    this.#state = initial;
  }

  getState = (): T => this.#state;

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  protected update(change: Partial<T>): void {
    this.#state = { ...this.#state, ...change };
    for (const listener of this.#listeners) listener();
  }
}
