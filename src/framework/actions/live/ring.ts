/**
 * The recent changes of one process, each record's change under its own position, kept so that a
 * client reconnecting with `Last-Event-ID` is sent what it missed: at most `retained` of them, the
 * oldest dropped first. Positions count up from 1 in one process's life, over every user's changes:
 * an event id is the position sealed (AES-256-GCM under a key of this life, a fresh nonce for
 * each change, sealed once for all its subscribers), so that it tells its subscriber nothing,
 * neither how many changes others made between two of theirs nor which process sent it, and an id
 * of another process or an earlier life (another key) is not taken for one of ours.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { ChangeKind } from '../../../store/changes/changes.js';
import type { RecordId } from '../../../store/read/records.js';

/** One record's change, as streams send it. */
export interface ChangeEntry {
  readonly seq: number;
  readonly table: string;
  readonly kind: ChangeKind;
  readonly id: RecordId;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** An event id: base64url of the nonce, the 8-byte position and the tag (48 characters). */
const SEALED = /^[A-Za-z0-9_-]{48}$/;

export class ChangeRing {
  /** Seals positions into event ids, for this process's life only. */
  private readonly key = randomBytes(32);
  private entries: ChangeEntry[] = [];
  private last = 0;

  constructor(private readonly retained: number) {}

  /** The change's records, each given the next position, kept. */
  add(table: string, kind: ChangeKind, ids: readonly RecordId[]): ChangeEntry[] {
    const added = ids.map((id) => ({ seq: ++this.last, table, kind, id }));
    this.entries.push(...added);
    // Trimmed in one go once twice as long, so adding stays cheap.
    if (this.entries.length > 2 * this.retained) this.entries = this.entries.slice(-this.retained);
    return added;
  }

  /** Each entry's event id, sealed once for all its subscribers (a seal per subscriber per change was the fan-out's largest cost). */
  private readonly sealed = new WeakMap<ChangeEntry, string>();

  /** The event id subscribers see: the entry's position, sealed. */
  eventId(entry: ChangeEntry): string {
    let id = this.sealed.get(entry);
    if (id === undefined) {
      this.seal([entry]);
      id = this.sealed.get(entry)!;
    }
    return id;
  }

  /** Seals the event ids of those of `entries` not sealed yet, their nonces drawn at once (a draw per id was a third of a seal's cost). */
  seal(entries: readonly ChangeEntry[]): void {
    const unsealed = entries.filter((entry) => !this.sealed.has(entry));
    const nonces = randomBytes(NONCE_BYTES * unsealed.length);
    const position = Buffer.alloc(8);
    for (const [index, entry] of unsealed.entries()) {
      const nonce = nonces.subarray(index * NONCE_BYTES, (index + 1) * NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
      position.writeBigUInt64BE(BigInt(entry.seq));
      this.sealed.set(entry, Buffer.concat([nonce, cipher.update(position), cipher.final(), cipher.getAuthTag()]).toString('base64url'));
    }
  }

  /**
   * The entries of `table` after the event id `lastEventId`; undefined when they cannot all be
   * told: an id not sealed by this process's life, or older than the oldest entry kept.
   */
  since(lastEventId: string, table: string): ChangeEntry[] | undefined {
    const seq = this.opened(lastEventId);
    if (seq === undefined || seq > this.last) return undefined;
    const kept = this.entries.slice(-this.retained);
    const oldest = kept[0]?.seq ?? this.last + 1;
    if (seq < oldest - 1) return undefined;
    return kept.filter((entry) => entry.seq > seq && entry.table === table);
  }

  /** The position an event id seals, or undefined when it is not one of this life's. */
  private opened(eventId: string): number | undefined {
    if (!SEALED.test(eventId)) return undefined;
    const sealed = Buffer.from(eventId, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      const position = Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
      return Number(position.readBigUInt64BE());
    } catch {
      return undefined;
    }
  }
}
