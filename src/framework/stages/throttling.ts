/**
 * The throttling stage: a fixed window per client (users by id, anonymous
 * clients by IP), with RateLimit-* headers on every throttled-stage response
 * (the 429 included) and 429 + Retry-After over the rate.
 *
 * Why not @fastify/rate-limit: see docs/deploying.md ("Throttling").
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { AuthUser } from '../base/auth-user.js';
import { ApiError } from '../base/errors.js';
import { clientKey } from '../base/proxy.js';
import type { MaybePromise } from '../../core/maybe-promise.js';

export interface Rate {
  readonly limit: number;
  readonly windowSeconds: number;
}

const WINDOWS: Record<string, number> = { sec: 1, second: 1, min: 60, minute: 60, hour: 3600, day: 86_400 };

/** `N/sec|min|hour|day` → a Rate; `off` → null. */
export function parseRate(text: string): Rate | null {
  if (text.trim() === 'off') return null;
  const match = /^\s*(\d+)\s*\/\s*(sec|second|min|minute|hour|day)\s*$/.exec(text);
  if (!match || Number(match[1]) < 1) throw new Error(`Invalid rate "${text}": use N/sec, N/min, N/hour, N/day or off.`);
  return { limit: Number(match[1]), windowSeconds: WINDOWS[match[2]!]! };
}

/** Where counters live: this process by default, Redis when several processes must agree. */
export interface CounterStore {
  /** Adds `weight` hits (one unless given) to `key`'s window and returns the hits so far and the seconds until the window ends. */
  hit(key: string, windowSeconds: number, weight?: number): Promise<{ hits: number; resetSeconds: number }>;
  /** Counters that fall back to this process while Redis is away (sharedOrLocalCounterStore): whether they are shared now, and how often they fell back. */
  readonly sharing?: { readonly shared: boolean; readonly fallbacks: number };
}

const wholeSeconds = (milliseconds: number): number => Math.max(1, Math.ceil(milliseconds / 1000));

/** How many windows the in-memory store holds at most (see docs/deploying.md, "Throttling"). */
const MAX_MEMORY_WINDOWS = 200_000;

interface Window {
  readonly key: string;
  hits: number;
  readonly endsAt: number;
}

/**
 * The windows of one length, in the order they began, which is the order they end. An array with
 * a moving head rather than a Map: the oldest window is found at once, however many have ended.
 */
class WindowQueue {
  private windows: Window[] = [];
  private head = 0;

  get first(): Window | undefined {
    return this.windows[this.head];
  }

  push(window: Window): void {
    this.windows.push(window);
  }

  shift(): Window | undefined {
    const window = this.windows[this.head++];
    if (this.head >= 1024 && this.head * 2 >= this.windows.length) {
      this.windows = this.windows.slice(this.head);
      this.head = 0;
    }
    return window;
  }
}

/** The windows of one length: by key, and the same windows in the order they end. */
interface WindowsOfLength {
  readonly byKey: Map<string, Window>;
  readonly queue: WindowQueue;
}

/**
 * Counters in this process, O(1) per hit. Windows of one length end in the order they began, so
 * each length keeps a queue of them: ended windows are dropped from its front. At `maxWindows`
 * live windows, a new one pushes out the window closest to its end (of any length): the store
 * stays bounded, and what it forgets is the count with the least time left to hold.
 */
export function memoryCounterStore(options: { maxWindows?: number; now?: () => number } = {}): CounterStore {
  // Whole milliseconds of a clock that never goes back, so windows end in the order they began.
  const { maxWindows = MAX_MEMORY_WINDOWS, now = () => Math.round(performance.now()) } = options;
  const lengths = new Map<number, WindowsOfLength>();
  let size = 0;
  const drop = ({ byKey, queue }: WindowsOfLength): void => {
    byKey.delete(queue.shift()!.key);
    size--;
  };
  const dropEnded = (time: number): void => {
    for (const length of lengths.values()) while (length.queue.first && length.queue.first.endsAt <= time) drop(length);
  };
  /** The length whose first window ends soonest (a handful of lengths: one per rate's unit). */
  const soonestEnding = (): WindowsOfLength => {
    let soonest: WindowsOfLength | undefined;
    for (const length of lengths.values()) {
      const first = length.queue.first;
      if (first && (!soonest || first.endsAt < soonest.queue.first!.endsAt)) soonest = length;
    }
    return soonest!;
  };
  return {
    async hit(key, windowSeconds, weight = 1) {
      const time = now();
      dropEnded(time);
      let length = lengths.get(windowSeconds);
      if (!length) lengths.set(windowSeconds, (length = { byKey: new Map(), queue: new WindowQueue() }));
      let window = length.byKey.get(key);
      if (!window) {
        if (size >= maxWindows) drop(soonestEnding());
        window = { key, hits: 0, endsAt: time + windowSeconds * 1000 };
        length.byKey.set(key, window);
        length.queue.push(window);
        size++;
      }
      window.hits += weight;
      return { hits: window.hits, resetSeconds: wholeSeconds(window.endsAt - time) };
    },
  };
}

// One round trip, atomic: the first hit of a window sets its expiry, and a key
// somehow left without one gets it back, so a window can never outlive its rate.
const HIT_SCRIPT = `
local hits = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {hits, ttl}`;

type HitCommand = (key: string, windowMs: number, weight: number) => Promise<[number, number]>;

/** Counters in Redis under `prefix`, shared by every process that uses the same Redis and prefix. */
function redisCounterStore(redis: Redis, prefix: string): CounterStore {
  redis.defineCommand('restfoldThrottleHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  const hitCommand = (redis as unknown as { restfoldThrottleHit: HitCommand }).restfoldThrottleHit.bind(redis);
  return {
    async hit(key, windowSeconds, weight = 1) {
      const [hits, ttl] = await hitCommand(`${prefix}throttle:${key}`, windowSeconds * 1000, weight);
      return { hits, resetSeconds: wholeSeconds(ttl) };
    },
  };
}

/**
 * Counters in Redis while it answers, else in this process: a Redis outage costs the limits their
 * sharing (each process holds them alone, so a client gets at most the rate times the processes),
 * never the service. Once Redis answers again, counting goes back to it. Each change is logged once.
 */
export function sharedOrLocalCounterStore(redis: Redis, prefix: string, log: FastifyBaseLogger): CounterStore {
  const remote = redisCounterStore(redis, prefix);
  const local = memoryCounterStore();
  const sharing = { shared: true, fallbacks: 0 };
  const fallBack = (error: unknown): void => {
    if (!sharing.shared) return;
    sharing.shared = false;
    sharing.fallbacks += 1;
    log.warn({ err: error }, 'rate-limit store unreachable: counting in this process until Redis is back');
  };
  return {
    sharing,
    async hit(key, windowSeconds, weight) {
      // Not connected: no command is even tried (none is queued), so no request waits.
      if (redis.status !== 'ready') {
        fallBack(new Error(`Redis is ${redis.status}`));
        return local.hit(key, windowSeconds, weight);
      }
      try {
        const counted = await remote.hit(key, windowSeconds, weight);
        if (!sharing.shared) {
          sharing.shared = true;
          log.info('rate-limit store back: counting in Redis again');
        }
        return counted;
      } catch (error) {
        fallBack(error);
        return local.hit(key, windowSeconds, weight);
      }
    },
  };
}

/** Counts `weight` requests against `rate` under `key`: sets the RateLimit-* headers, throws 429 over the rate. */
async function consume(store: CounterStore, request: FastifyRequest, reply: FastifyReply, key: string, rate: Rate, weight = 1): Promise<void> {
  const { hits, resetSeconds } = await store.hit(`${key}:${rate.limit}/${rate.windowSeconds}`, rate.windowSeconds, weight);
  const remaining = Math.max(0, rate.limit - hits);
  const shown = reply.getHeader('RateLimit-Remaining');
  // Where one request counts against several limits, the headers tell of the nearest.
  if (shown === undefined || remaining <= Number(shown)) {
    reply.header('RateLimit-Limit', String(rate.limit));
    reply.header('RateLimit-Remaining', String(remaining));
    reply.header('RateLimit-Reset', String(resetSeconds));
  }
  if (hits > rate.limit) {
    throw new ApiError(429, 'throttled', `Request was throttled. Expected available in ${resetSeconds} seconds.`, undefined, {
      'Retry-After': String(resetSeconds),
    });
  }
}

export interface ThrottleRates {
  readonly anonymous: Rate | null;
  readonly user: Rate | null;
}

/** The API's rates: a collection's by default, and anonymous writes' passwords per client address (THROTTLE_SIGNUP). */
export interface DefaultRates extends ThrottleRates {
  readonly signup: Rate | null;
}

/** A throttle bucket's own rates, each `N/sec|min|hour|day` or `off`; a kind left out keeps the default rate. */
export interface BucketRates {
  readonly anonymous?: string;
  readonly user?: string;
}

export interface Throttle {
  /** A collection's request (its bucket: the collection's name): in the bucket's own window when the app gave it rates, else in the shared default window. Nothing to wait for with no rate. */
  check(request: FastifyRequest, reply: FastifyReply, user: AuthUser | null, bucket: string): MaybePromise<void>;
  /** A request outside the collections (simple routes, throttleRequest): always in the bucket's own window, at its rates or the defaults. */
  checkBucket(request: FastifyRequest, reply: FastifyReply, user: AuthUser | null, bucket: string): Promise<void>;
  /**
   * A collection write's passwords to hash, `hashings` of them (one per record that sets one), once
   * `check` counted the request. A user's: each beyond the first counts as one more request in the
   * window `check` counted in (so a single-record write is one request, as any other). An anonymous
   * client's: each counts against the sign-up rate per client address.
   */
  passwordWrites(request: FastifyRequest, reply: FastifyReply, user: AuthUser | null, bucket: string, hashings: number): MaybePromise<void>;
}

function resolveBucketRates(defaults: ThrottleRates, buckets: Readonly<Record<string, BucketRates>>): Map<string, ThrottleRates> {
  const resolve = (bucket: string, kind: keyof BucketRates, text: string | undefined, fallback: Rate | null): Rate | null => {
    if (text === undefined) return fallback;
    try {
      return parseRate(text);
    } catch (error) {
      throw new Error(`throttles.${bucket}.${kind}: ${(error as Error).message}`);
    }
  };
  return new Map(
    Object.entries(buckets).map(([bucket, rates]) => [
      bucket,
      {
        anonymous: resolve(bucket, 'anonymous', rates.anonymous, defaults.anonymous),
        user: resolve(bucket, 'user', rates.user, defaults.user),
      },
    ]),
  );
}

/** A simple route's throttle is a Fastify hook, which answers with a promise. */
const UNCOUNTED: Promise<void> = Promise.resolve();

/**
 * The collection throttle. A bucket with rates of its own counts separately
 * from the shared default window, so a strict collection does not eat into
 * the rest of the API's allowance.
 */
export function createThrottle(store: CounterStore, rates: DefaultRates, bucketRates: Readonly<Record<string, BucketRates>> = {}): Throttle {
  const buckets = resolveBucketRates(rates, bucketRates);
  // The stored key keeps its `scope:` prefix: counters in Redis are shared with the other processes of a rolling deploy, which count in the same windows.
  const bucketWindow = (bucket: string): string => `scope:${bucket}`;
  const collectionWindow = (bucket: string): string => (buckets.has(bucket) ? bucketWindow(bucket) : 'default');
  // Not async: a request with no rate to count against (throttling off) costs no promise, nor a turn of the event loop to await one.
  const count = (request: FastifyRequest, reply: FastifyReply, user: AuthUser | null, bucket: string, window: string, weight = 1): MaybePromise<void> => {
    const { anonymous, user: signedIn } = buckets.get(bucket) ?? rates;
    const rate = user ? signedIn : anonymous;
    if (!rate) return undefined;
    const client = user ? `user:${user.id}` : `ip:${clientKey(request)}`;
    return consume(store, request, reply, `${window}:${client}`, rate, weight);
  };
  return {
    check: (request, reply, user, bucket) => count(request, reply, user, bucket, collectionWindow(bucket)),
    checkBucket: (request, reply, user, bucket) => count(request, reply, user, bucket, bucketWindow(bucket)) ?? UNCOUNTED,
    passwordWrites(request, reply, user, bucket, hashings) {
      if (user) return hashings > 1 ? count(request, reply, user, bucket, collectionWindow(bucket), hashings - 1) : undefined;
      return rates.signup && hashings > 0 ? consume(store, request, reply, `signup:ip:${clientKey(request)}`, rates.signup, hashings) : undefined;
    },
  };
}

/**
 * Counts one credential check; throws 429 over the rate. `account` names the user it is about, when
 * known (auth-user.ts's accountKey: a login's account, the user whose current password is checked).
 */
export interface PasswordThrottle {
  (request: FastifyRequest, reply: FastifyReply, account: string | undefined): Promise<void>;
  /** The per-account count alone: a credential check counts the client first, then the account it found. */
  account(request: FastifyRequest, reply: FastifyReply, account: string): Promise<void>;
}

/**
 * The stricter throttle for every credential check (token obtain, JWT obtain, session login, an app's
 * credentials.check, a current password confirming a change): THROTTLE_LOGIN per client IP, so trying
 * many usernames from one address counts as one stream of guesses, and the same rate per account, so
 * many addresses cannot pool their allowance against one user. Setting a password checks none: those
 * writes count in Throttle.passwordWrites.
 */
export function createPasswordThrottle(store: CounterStore, rate: Rate | null): PasswordThrottle {
  const account = async (request: FastifyRequest, reply: FastifyReply, name: string): Promise<void> => {
    if (rate) await consume(store, request, reply, `login:user:${name}`, rate);
  };
  const throttle = async (request: FastifyRequest, reply: FastifyReply, name: string | undefined): Promise<void> => {
    if (!rate) return;
    await consume(store, request, reply, `login:ip:${clientKey(request)}`, rate);
    if (name !== undefined) await account(request, reply, name);
  };
  return Object.assign(throttle, { account });
}
