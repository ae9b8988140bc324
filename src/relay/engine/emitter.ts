// A typed event emitter with any number of listeners (no max-listeners warning), whose listeners
// cannot break the emitter: a listener that throws is reported to `onListenerError` and the others still run.
export type EventMap = Record<string, unknown[]>;

export class TypedEmitter<Events extends EventMap> {
  /** Each set holds the listeners of its own event (any listener fits `never`; emit gives it back its type). */
  private readonly listeners = new Map<keyof Events, Set<(...args: never) => void>>();

  constructor(private readonly onListenerError: <E extends keyof Events>(error: unknown, event: E, args: Events[E]) => void) {}

  /** Adds a listener; returns the function that removes it. */
  on<E extends keyof Events>(event: E, listener: (...args: Events[E]) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => this.off(event, listener);
  }

  off<E extends keyof Events>(event: E, listener: (...args: Events[E]) => void): void {
    this.listeners.get(event)?.delete(listener);
  }

  /** Calls the listeners in the order they were added, synchronously. */
  emit<E extends keyof Events>(event: E, ...args: Events[E]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])] as ((...args: Events[E]) => void)[]) {
      try {
        listener(...args);
      } catch (error) {
        this.onListenerError(error, event, args);
      }
    }
  }
}
