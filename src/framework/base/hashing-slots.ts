/**
 * Who may derive a password hash when. Two kinds of work share the slots: checks (a login, a token or
 * JWT obtain: a person is waiting on the answer) and writes (hashing a new password on a create or a
 * change). Writes may hold at most half the slots (at least one), so a flood of them can never occupy
 * them all, and a freed slot goes to a waiting check before a waiting write. With a single slot the
 * two share it and checks go first.
 */
export type HashingWork = 'check' | 'write';

export interface HashingSlots {
  /** Runs `task` once a slot allows `work`; waiting is first come, first served within a kind. */
  run<T>(work: HashingWork, task: () => Promise<T>): Promise<T>;
}

export function hashingSlots(total: number): HashingSlots {
  const writeLimit = Math.max(1, Math.floor(total / 2));
  let running = 0;
  let writing = 0;
  const waiting: Record<HashingWork, (() => void)[]> = { check: [], write: [] };

  const allows = (work: HashingWork): boolean => running < total && (work === 'check' || writing < writeLimit);
  const take = (work: HashingWork): void => {
    running += 1;
    if (work === 'write') writing += 1;
  };
  const release = (work: HashingWork): void => {
    running -= 1;
    if (work === 'write') writing -= 1;
    for (const kind of ['check', 'write'] as const) {
      while (waiting[kind].length > 0 && allows(kind)) {
        take(kind);
        waiting[kind].shift()!();
      }
    }
  };

  return {
    async run(work, task) {
      if (waiting[work].length === 0 && allows(work)) take(work);
      // The slot is taken on the waiter's behalf before it is woken.
      else await new Promise<void>((resolve) => waiting[work].push(resolve));
      try {
        return await task();
      } finally {
        release(work);
      }
    },
  };
}
