/**
 * What a live stream remembers (hub.ts): the ids it has told its subscriber of, at most `track`;
 * past it, none (`known` null: the stream can no longer tell). Streams whose memories hold the
 * same ids may share one (LiveHub.share), so each memory keeps a fingerprint, its size and the sum
 * of its ids' hashes, kept as ids come and go: two memories are compared id by id only where their
 * fingerprints agree, so a new stream is not compared in full against every other.
 */
export class Memory {
  #known: Set<string> | null;
  /** The sum (mod 2^32) of the hashes of the ids in `known`: order-independent, and an id's removal subtracts it. */
  #sum = 0;
  readonly #track: number;

  /** `keys` null: more than `track`, none remembered. */
  constructor(keys: readonly string[] | null, track: number) {
    this.#track = track;
    this.#known = keys && new Set(keys);
    if (this.#known) for (const key of this.#known) this.#sum = (this.#sum + hashOf(key)) | 0;
  }

  get known(): ReadonlySet<string> | null {
    return this.#known;
  }

  /** Remembers `key` as told; past `track`, forgets them all. */
  remember(key: string): void {
    const known = this.#known;
    if (!known || known.has(key)) return;
    known.add(key);
    this.#sum = (this.#sum + hashOf(key)) | 0;
    if (known.size > this.#track) this.#known = null;
  }

  /** Forgets `key`; whether it was remembered. */
  forget(key: string): boolean {
    if (!this.#known?.delete(key)) return false;
    this.#sum = (this.#sum - hashOf(key)) | 0;
    return true;
  }

  /** Whether `other` holds the same ids (or, as this one, none): compared in full only where the fingerprints agree. */
  holdsSameAs(other: Memory): boolean {
    const [mine, theirs] = [this.#known, other.#known];
    if (mine === null || theirs === null) return mine === theirs;
    if (mine.size !== theirs.size || this.#sum !== other.#sum) return false;
    for (const key of mine) if (!theirs.has(key)) return false;
    return true;
  }
}

/** FNV-1a (32 bits) of a key: cheap, and spread enough that differing sets rarely sum alike. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < key.length; index++) hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193);
  return hash;
}
