/**
 * CSV (`Accept: text/csv` or `?format=csv`) for a collection that names it (`renderers:
 * [csvRenderer]`), as DRF's rest_framework_csv renders: a header row of
 * the fields' names (narrowed by `fields=` and `omit=`), then a row per record, RFC 4180 with CRLF.
 * A list is every record its filters, search, ordering and scope select, streamed in batches
 * (`lists: 'all'`), unless the request names a page. Nested values are their JSON text; a text
 * cell a spreadsheet would take for a formula is made text (docs/api-style.md, CSV).
 */
import { stringify, type Options } from 'csv-stringify/sync';
import { isJsonObject } from '../../core/json.js';
import type { Renderer, RenderInput } from '../declare/renderer.js';

type Record = Readonly<globalThis.Record<string, unknown>>;

/** Records written per chunk of a streamed list: one string per chunk, not per record. */
const CHUNK = 200;

const options = (columns: readonly string[], header: boolean): Options => ({
  columns: [...columns],
  header,
  record_delimiter: 'windows',
  // OWASP's CSV injection advice: a cell beginning = + - @ tab or CR gets a leading ', so a
  // spreadsheet shows it as text and runs nothing (a number, negative or not, is left as it is).
  escape_formulas: true,
  cast: {
    boolean: (value) => (value ? 'true' : 'false'),
    object: (value) => JSON.stringify(value),
  },
});

/** The records a body shows: a page's results, an array's items, or the one record. */
function recordsOf(body: unknown): Record[] {
  const records = isJsonObject(body) && Array.isArray(body.results) ? body.results : Array.isArray(body) ? body : [body];
  return records.map((record: unknown) => (isJsonObject(record) ? record : { value: record }));
}

async function* streamed(records: AsyncIterable<Record>, columns: readonly string[]): AsyncGenerator<string> {
  yield stringify([], options(columns, true));
  let chunk: Record[] = [];
  for await (const record of records) {
    chunk.push(record);
    if (chunk.length < CHUNK) continue;
    yield stringify(chunk, options(columns, false));
    chunk = [];
  }
  if (chunk.length > 0) yield stringify(chunk, options(columns, false));
}

function render({ body, records, fields }: RenderInput): string | AsyncIterable<string> {
  if (records) return streamed(records, fields ?? []);
  const rows = recordsOf(body);
  const columns = fields ?? Object.keys(rows[0] ?? {});
  return stringify(rows, options(columns, true));
}

/**
 * CSV (`text/csv`, `?format=csv`): a header row of the fields, a row per record, whole lists streamed
 * (docs/guides/collections-and-actions.md).
 */
export const csvRenderer: Renderer = { mediaType: 'text/csv', format: 'csv', lists: 'all', render };
