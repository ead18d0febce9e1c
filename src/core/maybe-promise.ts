/**
 * Answers that may come at once or later. Hot paths stay synchronous while the answers are
 * (most field parses and permission checks answer at once): awaiting each would cost every
 * request a promise apiece. See docs/performance.md.
 */
export type MaybePromise<T> = T | Promise<T>;

/** An answer still to come: a promise, or any thenable a user's code returns. */
export const isPending = <T>(answer: MaybePromise<T> | PromiseLike<T>): answer is Promise<T> =>
  typeof (answer as Partial<PromiseLike<T>> | null)?.then === 'function';
