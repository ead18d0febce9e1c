/**
 * A duty cycle for work that takes in one go whatever has waited for it (a live hub's reads and its
 * writes to the streams, the changes a process sends the others): after work that took t ms, the
 * next starts only once `perMsSpent` × t has passed, at most `maxMs`. Under a stream of arrivals
 * the work then takes at most 1 / (1 + perMsSpent) of the time, and what arrives meanwhile is done
 * together, in one statement or one write; when nothing came lately, it starts at once.
 */
export class Pacing {
  #nextAt = 0;

  constructor(
    private readonly perMsSpent: number,
    private readonly maxMs: number,
  ) {}

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
    this.#nextAt = performance.now() + Math.min(this.perMsSpent * ms, this.maxMs);
  }
}
