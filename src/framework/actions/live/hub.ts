/**
 * A process's live streams (docs/guides/live-changes.md). Every committed change,
 * from this process or another (app/live.ts carries them), passes here in the order it arrives,
 * one at a time: its records get event ids and a place in the ring, then each stream of the table
 * hears of them as its subscriber may see them. Streams reading the same way (the same scope,
 * filters and fields) share one statement per change, which reads the changed records through
 * their list's conditions. Streams of one group that have told their subscribers the same ids share
 * what they remember (a Memory), so each change is decided once for them all. Where their
 * serializer renders a record from its row alone, they render alike too, and each event is rendered
 * and framed once for all of them, each distinct batch of events encoded once; else each
 * subscriber's event is rendered for them. A stream is sent what one delivery tells it in one write.
 *
 * Telling costs a read per change and group, and a write per stream: both are paced
 * (base/pacing.ts). After the hub read, it reads again only once a pause in proportion to that read
 * has passed (at most MAX_READ_PAUSE_MS), the changes arriving meanwhile read together; after
 * it wrote, it writes again only once a pause in proportion to that write and the framing before it
 * has passed (at most MAX_PAUSE_MS), a stream sent the events of that pause in one write. So
 * under a stream of writes telling takes a bounded share of the process and of the database; each
 * stream is sent the same events in the same order as without the pauses, and an idle hub reads
 * and writes at once.
 *
 * Whether a change is a `created`, an `updated` or a `deleted` for a subscriber is decided by what
 * the stream has told them: each stream remembers the ids of the records it has shown (seeded, as
 * it opens, with those its subscriber may see then), at most `track` of them. A changed record they
 * may see is `created` when not among them, else `updated`; one they may no longer see, or deleted,
 * is `deleted` (its id alone) when among them, else nothing. Where the stream cannot know (more
 * records than `track`, or changes replayed after Last-Event-ID, which its remembered ids predate),
 * the id of a record they cannot see is never sent, as it may be another's (the scope holds on this
 * path too): a replay that met one ends with `reset`, so the client refetches its list; past `track`
 * such a change is not told.
 *
 * A stream keeps its rights only while they hold: each authenticated stream is checked again every
 * `recheckMs` (its request's credential authenticated anew, the list's permissions passed), and at
 * once, before any later change reaches it, when a process says its user's credentials or rights
 * changed (app/live.ts carries that as it carries changes) or when such a message may have been
 * missed (reset). A stream that fails is sent `revoked`, with the error its request would now get,
 * and ended.
 */
import type { FastifyBaseLogger } from 'fastify';
import { stringifyJson } from '../../../core/json.js';
import type { Row } from '../../../core/rows.js';
import type { Change } from '../../../store/changes/changes.js';
import type { RecordId } from '../../../store/read/records.js';
import { ApiError } from '../../base/errors.js';
import { Pacing } from '../../base/pacing.js';
import { Memory } from './memory.js';
import { ChangeRing, type ChangeEntry } from './ring.js';
import { eventFrame, EventStream, type StreamLimits } from './stream.js';

export interface LiveLimits extends StreamLimits {
  /** Streams open at once on the process (503 past it). */
  readonly maxStreams: number;
  /** Streams open at once for one user (anonymous: one client address) on the process (429 past it). */
  readonly maxStreamsPerUser: number;
  /** Record changes kept for Last-Event-ID (the ring). */
  readonly retained: number;
  /** Between checks of an authenticated stream's credential and permissions. */
  readonly recheckMs: number;
}

/** What a stream reads and renders for its subscriber (actions/events.ts builds it from the request). */
export interface Subscription {
  readonly table: string;
  /** Subscriptions reading the same way share a key, and a statement per change. */
  readonly group: string;
  /** How many ids the stream remembers (LiveOptions.track). */
  readonly track: number;
  /** Who it counts against for maxStreamsPerUser. */
  readonly owner: string;
  /** The subscriber's user (undefined: anonymous): a change of their credentials or rights checks the stream again. */
  readonly userId: number | undefined;
  /**
   * Whether the stream's rights still hold: undefined when they do, else the error (401 or 403) its
   * request would get now. Rejects when it cannot tell (the database unreachable).
   */
  recheck(): Promise<ApiError | undefined>;
  /** The Last-Event-ID the client resumes after, if any. */
  readonly lastEventId: string | undefined;
  /** The records among `ids` the subscriber may see, as their list reads them (one statement). */
  read(ids: readonly RecordId[]): Promise<Row[]>;
  /** The ids of the records the subscriber may see, at most `limit` + 1 (more than `limit`: too many to remember). */
  visibleIds(limit: number): Promise<RecordId[]>;
  /** A record as the subscriber's list renders it. */
  render(row: Row): unknown;
  /** Whether every subscription of its group renders a record as it does (Serializer.rendersFromRow), so that one render serves them all. */
  readonly rendersAlike: boolean;
}

interface Subscriber {
  readonly subscription: Subscription;
  readonly stream: EventStream;
  /** Its table and group, made once: every delivery sorts the streams by it. */
  readonly reads: string;
  /** The ids told of (see above). Streams of one group that told the same share one: the same changes, read alike, then tell them the same (see share). */
  memory: Memory;
  /** The recheck under way, if any. */
  rechecking?: Promise<void>;
  /** Rechecks an authenticated stream every recheckMs. */
  timer?: NodeJS.Timeout;
}

const idKey = (id: unknown): string => String(id);

/** Ids read per statement: a bulk write's change may name more than a statement may bind. */
const READ_BATCH = 500;

/** The longest pause between the hub's writes, whatever the last one cost. */
const MAX_PAUSE_MS = 200;

/** The longest pause between the hub's reads. */
const MAX_READ_PAUSE_MS = 20;

/** What one record's change tells a subscriber: an event of this kind, or, `unsure`, nothing it can be told (see above). */
type Told = 'created' | 'updated' | 'deleted' | 'unsure' | undefined;

const RESET = eventFrame('reset', undefined, '{}');

export class LiveHub {
  private readonly ring: ChangeRing;
  /** Every open stream's subscriber; the ones seeded (hearing changes) are in `listening`. */
  private readonly open = new Map<EventStream, Subscriber>();
  private readonly listening = new Set<Subscriber>();
  private readonly owners = new Map<string, number>();
  /** The changes and joins, one after another. */
  private queue: Promise<void> = Promise.resolve();
  /**
   * The changes of the last task queued, while it waits: a change arriving then joins them, so
   * that under a stream of writes the changes waiting are read together, one statement per group
   * for all of them. A delivery waits for the reads' pause (in proportion to the last
   * delivery's reads, at most MAX_READ_PAUSE_MS); a change arriving to an idle hub is
   * delivered at once.
   */
  private waiting: Change[] | undefined;
  /** Streams with events waiting to be written (EventStream.flush). */
  private readonly unwritten = new Set<EventStream>();
  /** The ms spent framing the events waiting. */
  private framing = 0;
  /** When the hub may write again, paced by what the last write (and the framing before it) cost. */
  private readonly writes = new Pacing(MAX_PAUSE_MS);
  /** When the hub may read changed records again, paced by how long the last delivery's reads took. */
  private readonly reads = new Pacing(MAX_READ_PAUSE_MS);
  private writeTimer: NodeJS.Timeout | undefined;
  private closing = false;
  /** Sends a committed change to every process, this one included (set by app/live.ts; by default, this process only). */
  publish: (change: Change) => void = (change) => this.receive(change);
  /** Sends every process that these users' credentials or rights changed (set by app/live.ts; by default, this process only). */
  publishCredentials: (userIds: readonly RecordId[]) => void = (userIds) => this.credentialsChanged(userIds);
  /** Sends every process that a group, its permissions or members changed (set by app/live.ts; by default, this process only). */
  publishRights: () => void = () => this.rightsChanged();

  constructor(
    readonly limits: LiveLimits,
    private readonly log: FastifyBaseLogger,
  ) {
    this.ring = new ChangeRing(limits.retained);
  }

  /**
   * A new stream for `subscription`, refused past the limits (before anything is sent); `start`
   * begins the response and returns its stream, which calls the function it is given once closed.
   */
  subscribe(subscription: Subscription, start: (closed: (stream: EventStream) => void) => EventStream): void {
    const { owner } = subscription;
    if (this.closing || this.open.size >= this.limits.maxStreams) {
      const why = this.closing ? 'This server is shutting down' : 'This server holds as many live streams as it may';
      throw new ApiError(503, 'service_unavailable', `${why}; try again shortly.`, undefined, { 'Retry-After': String(Math.ceil(this.limits.retryMs / 1000)) });
    }
    const held = this.owners.get(owner) ?? 0;
    if (held >= this.limits.maxStreamsPerUser) {
      throw new ApiError(429, 'throttled', `At most ${this.limits.maxStreamsPerUser} live streams may be open at once; close one first.`);
    }
    this.owners.set(owner, held + 1);
    const stream = start((closed) => this.leave(closed));
    const subscriber: Subscriber = { subscription, stream, reads: `${subscription.table}\0${subscription.group}`, memory: new Memory(null, subscription.track) };
    this.open.set(stream, subscriber);
    if (subscription.userId !== undefined) subscriber.timer = setInterval(() => void this.recheck(subscriber, false), this.limits.recheckMs).unref();
    this.enqueue(() => this.join(subscriber));
  }

  /** A change committed somewhere: told, in arrival order, to the streams of its table. */
  receive(change: Change): void {
    if (this.waiting) {
      this.waiting.push(change);
      return;
    }
    const changes = [change];
    this.enqueue(async () => {
      // Changes arriving during the pause join these: one read for them all.
      await this.reads.ready();
      if (this.waiting === changes) this.waiting = undefined;
      const started = performance.now();
      await this.deliver(changes);
      this.reads.spent(performance.now() - started);
    });
    this.waiting = changes;
  }

  /**
   * Changes may have been missed (the channel between processes was lost): every stream is told to
   * refetch, and, as a change of credentials may have been missed too, checked again first.
   */
  reset(): void {
    this.enqueue(async () => {
      await this.recheckAll([...this.open.values()]);
      const reseeded: Subscriber[] = [];
      for (const subscriber of this.listening) {
        await this.reseed(subscriber, true);
        this.share(subscriber, reseeded);
        reseeded.push(subscriber);
      }
    });
  }

  /** These users' credentials or rights changed: their streams are checked again before any later change reaches them. */
  credentialsChanged(userIds: readonly RecordId[]): void {
    const users = new Set(userIds.map(idKey));
    const theirs = [...this.open.values()].filter(({ subscription }) => subscription.userId !== undefined && users.has(idKey(subscription.userId)));
    if (theirs.length > 0) this.enqueue(() => this.recheckAll(theirs));
  }

  /** Some users' rights changed, which ones unknown (a group's): every authenticated stream is checked again before any later change reaches it. */
  rightsChanged(): void {
    const authenticated = [...this.open.values()].filter(({ subscription }) => subscription.userId !== undefined);
    if (authenticated.length > 0) this.enqueue(() => this.recheckAll(authenticated));
  }

  /** Ends every stream, each asking its client to come back (`retry:`), and refuses new ones. */
  close(): void {
    this.closing = true;
    for (const stream of this.open.keys()) stream.end();
  }

  private enqueue(task: () => Promise<void>): void {
    // A change arriving after this task is told after it, not with the changes before it.
    this.waiting = undefined;
    this.queue = this.queue
      .then(task)
      .catch((error: unknown) => this.log.error({ err: error }, 'live changes: a change could not be delivered'))
      .then(() => this.writeSoon());
  }

  private leave(stream: EventStream): void {
    const subscriber = this.open.get(stream);
    if (!subscriber) return;
    this.open.delete(stream);
    this.unwritten.delete(stream);
    this.listening.delete(subscriber);
    clearInterval(subscriber.timer);
    const { owner } = subscriber.subscription;
    const held = (this.owners.get(owner) ?? 1) - 1;
    if (held === 0) this.owners.delete(owner);
    else this.owners.set(owner, held);
  }

  /** Seeds the stream's remembered ids, replays what it missed (or tells it to refetch), then lets it hear changes. */
  private async join(subscriber: Subscriber): Promise<void> {
    if (!subscriber.stream.open) return;
    const { lastEventId, table } = subscriber.subscription;
    const missed = lastEventId === undefined ? [] : this.ring.since(lastEventId, table);
    await this.reseed(subscriber, missed === undefined);
    subscriber.stream.begin();
    if (missed && missed.length > 0) await this.tell([subscriber], missed, true);
    if (!subscriber.stream.open) return;
    this.share(subscriber, this.listening);
    this.listening.add(subscriber);
  }

  /**
   * The subscriber takes the memory of a stream among `others` of its table and group that
   * remembers the same ids, if any: from then on they are told the same of every change, decided
   * once. Compared once, as the stream starts to hear changes (or after a reset), most memories
   * told apart by their fingerprints alone (memory.ts).
   */
  private share(subscriber: Subscriber, others: Iterable<Subscriber>): void {
    for (const { memory, reads } of others) {
      if (memory !== subscriber.memory && reads === subscriber.reads && memory.holdsSameAs(subscriber.memory)) {
        subscriber.memory = memory;
        return;
      }
    }
  }

  /** The ids the subscriber may see now, remembered; with `reset`, the client is told to refetch its list. */
  private async reseed(subscriber: Subscriber, reset: boolean): Promise<void> {
    const { track } = subscriber.subscription;
    try {
      const ids = await subscriber.subscription.visibleIds(track);
      // A memory of its own: another stream's it shared is theirs still.
      subscriber.memory = new Memory(ids.length > track ? null : ids.map(idKey), track);
    } catch (error) {
      this.dropAfter(error, [subscriber]);
      return;
    }
    if (reset) this.send(subscriber.stream, RESET);
  }

  /** Changes in arrival order: each table's entries, told to each group of its streams with one read. */
  private async deliver(changes: readonly Change[]): Promise<void> {
    const byTable = new Map<string, ChangeEntry[]>();
    for (const change of changes) {
      const entries = this.ring.add(change.table, change.kind, change.ids);
      const table = byTable.get(change.table);
      if (table) table.push(...entries);
      else byTable.set(change.table, entries);
    }
    const groups = new Map<string, Subscriber[]>();
    for (const subscriber of this.listening) {
      if (!byTable.has(subscriber.subscription.table)) continue;
      const members = groups.get(subscriber.reads);
      if (members) members.push(subscriber);
      else groups.set(subscriber.reads, [subscriber]);
    }
    for (const members of groups.values()) await this.tell(members, byTable.get(members[0]!.subscription.table)!, false);
  }

  /**
   * Tells `members` (who read alike) of `entries`: their records read once, each decided once per
   * memory the members hold, each subscriber's events framed together.
   */
  private async tell(members: readonly Subscriber[], entries: readonly ChangeEntry[], replayed: boolean): Promise<void> {
    const ids = [...new Set(entries.filter(({ kind }) => kind !== 'deleted').map(({ id }) => id))];
    const rows: Row[] = [];
    try {
      for (let start = 0; start < ids.length; start += READ_BATCH) rows.push(...(await members[0]!.subscription.read(ids.slice(start, start + READ_BATCH))));
    } catch (error) {
      this.dropAfter(error, members);
      return;
    }
    const started = performance.now();
    const byId = new Map(rows.map((row) => [idKey(row.id), row]));
    const entryRows = entries.map(({ id }) => byId.get(idKey(id)));
    this.ring.seal(entries);
    const sharing = new Map<Memory, Subscriber[]>();
    for (const subscriber of members) {
      const alike = sharing.get(subscriber.memory);
      if (alike) alike.push(subscriber);
      else sharing.set(subscriber.memory, [subscriber]);
    }
    const { rendersAlike } = members[0]!.subscription;
    // Rendered alike: each event framed once (by its position and kind), each distinct batch encoded once.
    const framed = new Map<string, string>();
    const encoded = new Map<string, Buffer>();
    for (const [memory, alike] of sharing) {
      const told = entries.map((entry, index) => this.decide(memory, entry, entryRows[index], replayed));
      const reset = replayed && told.includes('unsure');
      if (!reset && told.every((kind) => kind === undefined || kind === 'unsure')) continue;
      if (!rendersAlike) {
        for (const subscriber of alike) this.send(subscriber.stream, this.frames(entries, entryRows, told, reset, (row) => subscriber.subscription.render(row)));
        continue;
      }
      const batch = told.join(' ');
      let bytes = encoded.get(batch);
      if (!bytes) {
        const { subscription } = alike[0]!;
        encoded.set(batch, (bytes = Buffer.from(this.frames(entries, entryRows, told, reset, (row) => subscription.render(row), framed))));
      }
      for (const subscriber of alike) this.send(subscriber.stream, bytes);
    }
    this.framing += performance.now() - started;
  }

  /** The events `told` of `entries`, framed (`framed`: frames already made for streams rendering alike, by position and kind), then `reset` if asked. */
  private frames(entries: readonly ChangeEntry[], rows: readonly (Row | undefined)[], told: readonly Told[], reset: boolean, render: (row: Row) => unknown, framed?: Map<string, string>): string {
    let frames = '';
    for (const [index, kind] of told.entries()) {
      if (kind === undefined || kind === 'unsure') continue;
      const entry = entries[index]!;
      const key = `${entry.seq}${kind}`;
      let frame = framed?.get(key);
      if (frame === undefined) {
        const row = rows[index];
        frame = eventFrame(kind, this.ring.eventId(entry), stringifyJson(row ? render(row) : { id: entry.id }));
        framed?.set(key, frame);
      }
      frames += frame;
    }
    return reset ? frames + RESET : frames;
  }

  /** Events for `stream`, written with the others' (see above). */
  private send(stream: EventStream, frames: string | Buffer): void {
    stream.sendFramed(frames);
    this.unwritten.add(stream);
  }

  /** The events waiting, written now if the pause after the last write is over, else once it is. */
  private writeSoon(): void {
    if (this.writeTimer || this.unwritten.size === 0) return;
    const pause = this.writes.left();
    if (pause <= 0) this.write();
    else this.writeTimer = setTimeout(() => this.write(), pause);
  }

  private write(): void {
    this.writeTimer = undefined;
    const started = performance.now();
    for (const stream of this.unwritten) stream.flush();
    this.unwritten.clear();
    this.writes.spent(this.framing + performance.now() - started);
    this.framing = 0;
  }

  /** What one record's change tells the streams holding `memory` (remembering what they then know); `unsure`: they may have shown a record they can no longer see, and cannot be told which. */
  private decide(memory: Memory, entry: ChangeEntry, row: Row | undefined, replayed: boolean): Told {
    const key = idKey(entry.id);
    const known = replayed ? null : memory.known;
    if (row) {
      const kind = known ? (known.has(key) ? 'updated' : 'created') : entry.kind === 'created' ? 'created' : 'updated';
      memory.remember(key);
      return kind;
    }
    if (!known) return entry.kind === 'created' ? undefined : 'unsure';
    return memory.forget(key) ? 'deleted' : undefined;
  }

  private async recheckAll(subscribers: readonly Subscriber[]): Promise<void> {
    await Promise.all(subscribers.map((subscriber) => this.recheck(subscriber, true)));
  }

  /**
   * Checks the stream's rights again; `fresh`: after any check under way (which may have read them
   * before they changed), else that one stands for it. A stream whose rights are gone is sent
   * `revoked`, then ended.
   */
  private recheck(subscriber: Subscriber, fresh: boolean): Promise<void> {
    if (subscriber.rechecking && !fresh) return subscriber.rechecking;
    const check = async (): Promise<void> => {
      if (!subscriber.stream.open) return;
      let refused: ApiError | undefined;
      try {
        refused = await subscriber.subscription.recheck();
      } catch (error) {
        // The database unreachable: the stream's reads fail as well, and nothing reaches it.
        this.log.warn({ err: error }, 'live changes: a stream\'s credential could not be checked again');
        return;
      }
      if (!refused || !subscriber.stream.open) return;
      subscriber.stream.send('revoked', undefined, stringifyJson({ error: refused.message, code: refused.code }));
      subscriber.stream.end();
    };
    const run = (subscriber.rechecking ?? Promise.resolve()).then(check);
    subscriber.rechecking = run;
    void run.finally(() => {
      if (subscriber.rechecking === run) subscriber.rechecking = undefined;
    });
    return run;
  }

  /** Streams whose read failed (the database unreachable): ended, so their clients come back with Last-Event-ID and miss nothing. */
  private dropAfter(error: unknown, members: readonly Subscriber[]): void {
    this.log.warn({ err: error }, 'live changes: a stream could not read its records, and was closed');
    for (const { stream } of members) stream.end();
  }
}
