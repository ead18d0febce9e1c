/**
 * The Redis connection behind REDIS_URL: state that several processes must
 * share (throttle counters). Connected at start-up so a wrong URL stops the
 * process with a clear message; afterwards a lost connection fails each
 * command at once (no offline queue) rather than letting requests hang.
 * ioredis is loaded only when REDIS_URL is set.
 */
import type { Redis } from 'ioredis';
import { ApiError } from './errors.js';

export async function connectRedis(url: string, onError: (error: Error) => void): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
    commandTimeout: 5000,
  });
  redis.on('error', onError);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`REDIS_URL: cannot connect to Redis (${(error as Error).message}).`);
  }
  return redis;
}

/** Quits politely when connected; otherwise just drops the connection (and its reconnect attempts). */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit();
  else redis.disconnect();
}

/** What a request that needs Redis gets while Redis cannot be reached. */
export const redisUnavailable = (store: string): ApiError =>
  new ApiError(503, 'service_unavailable', `The ${store} store is unreachable; try again shortly.`, undefined, { 'Retry-After': '5' });
