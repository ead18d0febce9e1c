/**
 * The throttling stage: a fixed window per client (users by id, anonymous
 * clients by IP), with RateLimit-* headers on every throttled-stage response
 * (the 429 included) and 429 + Retry-After over the rate.
 *
 * Why not @fastify/rate-limit: see docs/deploying.md ("Throttling").
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { redisUnavailable } from './redis.js';
import type { AuthUser } from './authentication/index.js';
import { ApiError } from './errors.js';

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
  /** Adds one hit to `key`'s window and returns the hits so far and the seconds until the window ends. */
  hit(key: string, windowSeconds: number): Promise<{ hits: number; resetSeconds: number }>;
}

const wholeSeconds = (milliseconds: number): number => Math.max(1, Math.ceil(milliseconds / 1000));

export function memoryCounterStore(now: () => number = Date.now): CounterStore {
  const windows = new Map<string, { hits: number; endsAt: number }>();
  return {
    async hit(key, windowSeconds) {
      const time = now();
      let window = windows.get(key);
      if (!window || window.endsAt <= time) {
        if (windows.size > 100_000) for (const [k, w] of windows) if (w.endsAt <= time) windows.delete(k);
        window = { hits: 0, endsAt: time + windowSeconds * 1000 };
        windows.set(key, window);
      }
      window.hits += 1;
      return { hits: window.hits, resetSeconds: wholeSeconds(window.endsAt - time) };
    },
  };
}

// One round trip, atomic: the first hit of a window sets its expiry, and a key
// somehow left without one gets it back, so a window can never outlive its rate.
const HIT_SCRIPT = `
local hits = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {hits, ttl}`;

type HitCommand = (key: string, windowMs: number) => Promise<[number, number]>;

/** Counters in Redis under `prefix`, shared by every process that uses the same Redis and prefix. */
export function redisCounterStore(redis: Redis, prefix: string): CounterStore {
  redis.defineCommand('restfoldThrottleHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  const hitCommand = (redis as unknown as { restfoldThrottleHit: HitCommand }).restfoldThrottleHit.bind(redis);
  return {
    async hit(key, windowSeconds) {
      const [hits, ttl] = await hitCommand(`${prefix}throttle:${key}`, windowSeconds * 1000);
      return { hits, resetSeconds: wholeSeconds(ttl) };
    },
  };
}

/** Counts one request against `rate` under `key`: sets the RateLimit-* headers, throws 429 over the rate. */
async function consume(store: CounterStore, request: FastifyRequest, reply: FastifyReply, key: string, rate: Rate): Promise<void> {
  let counted: { hits: number; resetSeconds: number };
  try {
    counted = await store.hit(`${key}:${rate.limit}/${rate.windowSeconds}`, rate.windowSeconds);
  } catch (error) {
    // Failing closed: a limit that silently stops holding would let a password guesser through.
    request.log.error({ err: error }, 'rate-limit store unreachable');
    throw redisUnavailable('rate-limit');
  }
  const { hits, resetSeconds } = counted;
  reply.header('RateLimit-Limit', String(rate.limit));
  reply.header('RateLimit-Remaining', String(Math.max(0, rate.limit - hits)));
  reply.header('RateLimit-Reset', String(resetSeconds));
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

/** A collection's own rates, each `N/sec|min|hour|day` or `off`; a kind left out keeps the default rate. */
export interface ScopedRates {
  readonly anonymous?: string;
  readonly user?: string;
}

export interface Throttle {
  check(request: FastifyRequest, reply: FastifyReply, user: AuthUser | null, scope: string): Promise<void>;
}

function resolveScopedRates(defaults: ThrottleRates, scoped: Readonly<Record<string, ScopedRates>>): Map<string, ThrottleRates> {
  const resolve = (scope: string, kind: keyof ScopedRates, text: string | undefined, fallback: Rate | null): Rate | null => {
    if (text === undefined) return fallback;
    try {
      return parseRate(text);
    } catch (error) {
      throw new Error(`throttles.${scope}.${kind}: ${(error as Error).message}`);
    }
  };
  return new Map(
    Object.entries(scoped).map(([scope, rates]) => [
      scope,
      {
        anonymous: resolve(scope, 'anonymous', rates.anonymous, defaults.anonymous),
        user: resolve(scope, 'user', rates.user, defaults.user),
      },
    ]),
  );
}

/**
 * The collection throttle. A scope with rates of its own counts separately
 * from the shared default window, so a strict collection does not eat into
 * the rest of the API's allowance.
 */
export function createThrottle(store: CounterStore, rates: ThrottleRates, scopedRates: Readonly<Record<string, ScopedRates>> = {}): Throttle {
  const scoped = resolveScopedRates(rates, scopedRates);
  return {
    async check(request, reply, user, scope) {
      const own = scoped.get(scope);
      const rate = user ? (own ?? rates).user : (own ?? rates).anonymous;
      if (!rate) return;
      const client = user ? `user:${user.id}` : `ip:${request.ip}`;
      await consume(store, request, reply, `${own ? `scope:${scope}` : 'default'}:${client}`, rate);
    },
  };
}

/** Counts one attempt at an endpoint that checks a password; throws 429 over the rate. */
export type LoginThrottle = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The stricter throttle for endpoints that take a username and password
 * (token obtain, JWT obtain, session login). Keyed by client IP alone, so
 * trying many usernames from one address counts as one stream of guesses.
 */
export function createLoginThrottle(store: CounterStore, rate: Rate | null): LoginThrottle {
  return async (request, reply) => {
    if (rate) await consume(store, request, reply, `login:ip:${request.ip}`, rate);
  };
}
