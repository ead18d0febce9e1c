/**
 * The throttling stage: a fixed window per client (users by id, anonymous
 * clients by IP), with RateLimit-* headers on every throttled-stage response
 * and 429 + Retry-After over the rate.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
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
      return { hits: window.hits, resetSeconds: Math.max(1, Math.ceil((window.endsAt - time) / 1000)) };
    },
  };
}

export interface ThrottleRates {
  readonly anonymous: Rate | null;
  readonly user: Rate | null;
}

export interface Throttle {
  check(request: FastifyRequest, reply: FastifyReply, user: AuthUser | null, scope: string): Promise<void>;
}

export function createThrottle(store: CounterStore, rates: ThrottleRates, scopedRates: Readonly<Record<string, ThrottleRates>> = {}): Throttle {
  return {
    async check(request, reply, user, scope) {
      const scoped = scopedRates[scope];
      const rate = user ? (scoped ?? rates).user : (scoped ?? rates).anonymous;
      if (!rate) return;
      const client = user ? `user:${user.id}` : `ip:${request.ip}`;
      const key = `${scoped ? scope : 'default'}:${client}:${rate.limit}/${rate.windowSeconds}`;
      const { hits, resetSeconds } = await store.hit(key, rate.windowSeconds);
      reply.header('RateLimit-Limit', String(rate.limit));
      reply.header('RateLimit-Remaining', String(Math.max(0, rate.limit - hits)));
      reply.header('RateLimit-Reset', String(resetSeconds));
      if (hits > rate.limit) {
        throw new ApiError(429, 'throttled', `Request was throttled. Expected available in ${resetSeconds} seconds.`, undefined, {
          'Retry-After': String(resetSeconds),
        });
      }
    },
  };
}
