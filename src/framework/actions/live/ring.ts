/**
 * The recent changes of one process, each record's change under its own event id, kept so that a
 * client reconnecting with `Last-Event-ID` is sent what it missed: at most `retained` of them, the
 * oldest dropped first. Ids count up from 1 in one process's life; `epoch` tells its lives apart.
 */
import { randomBytes } from 'node:crypto';
import type { ChangeKind } from '../../../store/changes/changes.js';
import type { RecordId } from '../../../store/read/records.js';

/** One record's change, as streams send it. */
export interface ChangeEntry {
  readonly seq: number;
  readonly table: string;
  readonly kind: ChangeKind;
  readonly id: RecordId;
}

export class ChangeRing {
  /** Names this process's life in event ids, so an id from another process or an earlier life is not taken for one of ours. */
  readonly epoch = randomBytes(4).toString('hex');
  private entries: ChangeEntry[] = [];
  private last = 0;

  constructor(private readonly retained: number) {}

  /** The change's records, each given the next event id, kept. */
  add(table: string, kind: ChangeKind, ids: readonly RecordId[]): ChangeEntry[] {
    const added = ids.map((id) => ({ seq: ++this.last, table, kind, id }));
    this.entries.push(...added);
    // Trimmed in one go once twice as long, so adding stays cheap.
    if (this.entries.length > 2 * this.retained) this.entries = this.entries.slice(-this.retained);
    return added;
  }

  /** The event id clients see: the epoch and the entry's number. */
  eventId(entry: ChangeEntry): string {
    return `${this.epoch}-${entry.seq}`;
  }

  /**
   * The entries of `table` after the event id `lastEventId`; undefined when they cannot all be
   * told: an id of another process or life, or older than the oldest entry kept.
   */
  since(lastEventId: string, table: string): ChangeEntry[] | undefined {
    const match = /^([0-9a-f]+)-(\d+)$/.exec(lastEventId);
    if (!match || match[1] !== this.epoch) return undefined;
    const seq = Number(match[2]);
    if (seq > this.last) return undefined;
    const kept = this.entries.slice(-this.retained);
    const oldest = kept[0]?.seq ?? this.last + 1;
    if (seq < oldest - 1) return undefined;
    return kept.filter((entry) => entry.seq > seq && entry.table === table);
  }
}
