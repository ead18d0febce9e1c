/**
 * Read-your-writes with read replicas (docs/deploying.md): before a user's request that may have
 * written is answered, the primary's WAL position, past everything it committed, is kept as that
 * user's (store/connection/write-positions.ts), so their next reads, on any process, go to a replica only
 * once it has replayed past it. Registered only where the database has replicas.
 */
import type { ReplicaSet } from '../../../store/connection/database.js';
import { appWide } from '../../base/app-wide.js';

/** Methods that write nothing (a custom action's code aside, which a GET should not run writes in). */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

export const readYourWrites = appWide<{ readonly replicas: ReplicaSet }>('read-your-writes', async (app, { replicas }) => {
  // onSend: before the client can have the answer, and so before it can ask for what it wrote.
  app.addHook('onSend', async (request, reply, payload) => {
    // A refused request wrote nothing that committed: no statement on the primary for it (a flood of bad writes costs none).
    if (!request.user || SAFE_METHODS.has(request.method) || reply.statusCode >= 400) return payload;
    try {
      await replicas.noteWrite(request.user.id);
    } catch (error) {
      // The write stands; only this user's next reads may then see a replica that has not caught up.
      request.log.error({ err: error }, 'the write position could not be kept: the next reads may miss this write');
    }
    return payload;
  });
});
