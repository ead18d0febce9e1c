/** Django's object history: who changed the record, when, and what, newest first. */
import type { LogEntryRow } from '../../../store/accounts/log-entries.js';
import { Layout, type Frame } from './layout.js';
import { readableTime } from './time.js';

const VERBS: Readonly<Record<LogEntryRow['action'], string>> = { add: 'Added', change: 'Changed', delete: 'Deleted' };

/** What an entry says it did (Django's change message): "Changed title and body." */
function said(entry: LogEntryRow): string {
  if (entry.action !== 'change') return `${VERBS[entry.action]}.`;
  if (entry.changed.length === 0) return 'No fields changed.';
  const names = entry.changed.length === 1 ? entry.changed[0]! : `${entry.changed.slice(0, -1).join(', ')} and ${entry.changed.at(-1)!}`;
  return `Changed ${names}.`;
}

export function HistoryPage(props: { frame: Frame; entries: readonly LogEntryRow[] }) {
  return (
    <Layout frame={props.frame}>
      {props.entries.length === 0 ? (
        <p>This record doesn’t have a change history. It probably wasn’t added via this admin site or the API.</p>
      ) : (
        <table class="results history">
          <thead>
            <tr>
              <th scope="col">Date/time</th>
              <th scope="col">User</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {props.entries.map((entry) => (
              <tr key={entry.id}>
                <th scope="row">
                  <time datetime={entry.actionTime.toISOString()}>{readableTime(entry.actionTime)}</time>
                </th>
                <td>{entry.username ?? (entry.userId === null ? 'anonymous' : `deleted user ${entry.userId}`)}</td>
                <td>{said(entry)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Layout>
  );
}
