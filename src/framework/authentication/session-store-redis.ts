/**
 * Sessions in Redis (when REDIS_URL is set), so every instance sees every
 * session; Redis expires them by itself.
 */
import { Redis } from 'ioredis';
import type { SessionStore, StoredSession } from './session-store.js';

const keyOf = (idHash: string): string => `restfold:session:${idHash}`;

export function redisSessionStore(url: string): SessionStore {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  return {
    async save(idHash, session, lifetime) {
      await redis.set(keyOf(idHash), JSON.stringify(session), 'EX', lifetime);
    },
    async load(idHash) {
      const text = await redis.get(keyOf(idHash));
      return text === null ? undefined : (JSON.parse(text) as StoredSession);
    },
    async remove(idHash) {
      return (await redis.del(keyOf(idHash))) > 0;
    },
    async close() {
      await redis.quit();
    },
  };
}
