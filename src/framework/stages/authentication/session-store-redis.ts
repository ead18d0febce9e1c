/**
 * Sessions in Redis (when REDIS_URL is set), so every instance sees every
 * session; Redis expires them by itself. The connection is the app's own
 * (shared with the throttle counters); an unreachable Redis is a 503.
 */
import type { Redis } from 'ioredis';
import { redisUnavailable } from '../../base/redis.js';
import type { SessionStore, StoredSession } from './session-store.js';

export function redisSessionStore(redis: Redis, prefix: string): SessionStore {
  const recordKeyOf = (idHash: string): string => `${prefix}session:${idHash}`;
  const reaching = async <T>(command: () => Promise<T>): Promise<T> => {
    try {
      return await command();
    } catch {
      throw redisUnavailable('session');
    }
  };
  return {
    save: (idHash, session, lifetime) =>
      reaching(async () => {
        await redis.set(recordKeyOf(idHash), JSON.stringify(session), 'EX', lifetime);
      }),
    load: (idHash) =>
      reaching(async () => {
        const text = await redis.get(recordKeyOf(idHash));
        return text === null ? undefined : (JSON.parse(text) as StoredSession);
      }),
    remove: (idHash) => reaching(async () => (await redis.del(recordKeyOf(idHash))) > 0),
  };
}
