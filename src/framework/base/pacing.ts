/**
 * The pause after work, per ms it took: paced work takes at most 1 / (1 + PAUSE_PER_MS_SPENT) of
 * the time under a stream of arrivals.
 */
const PAUSE_PER_MS_SPENT = 9;

/**
 * A duty cycle for work that takes in one go whatever has waited for it (a live hub's reads of
 * changed records and its writes to the streams): after work that took t ms, the
 * next starts only once PAUSE_PER_MS_SPENT × t has passed, at most `maxMs`. What arrives meanwhile
 * is done together, in one statement or one write; when nothing came lately, it starts at once.
 */
export class Pacing {
  #nextAt = 0;

  constructor(private readonly maxMs: number) {}

  /** The ms before the next work may start (none left: zero or less). */
  left(): number {
    return this.#nextAt - performance.now();
  }

  /** Settles once the next work may start; undefined when it may now. */
  ready(): Promise<void> | undefined {
    const left = this.left();
    return left > 0 ? new Promise((resolve) => setTimeout(resolve, left)) : undefined;
  }

  /** The work just done took `ms`. */
  spent(ms: number): void {
    this.#nextAt = performance.now() + Math.min(PAUSE_PER_MS_SPENT * ms, this.maxMs);
  }
}
