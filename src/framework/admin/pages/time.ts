/**
 * Dates and times as Django's admin shows them ("Nov. 29, 2026", "Nov. 29, 2026, 3:49 p.m. UTC"):
 * in UTC, as the forms' pickers are, with the ISO value kept in the page's <time datetime>.
 */
const MONTHS = ['Jan.', 'Feb.', 'March', 'April', 'May', 'June', 'July', 'Aug.', 'Sept.', 'Oct.', 'Nov.', 'Dec.'];

/** `2026-11-29` → `Nov. 29, 2026`; undefined for text that is no date. */
export function readableDate(text: string): string | undefined {
  const found = /^(\d{4})-(\d\d)-(\d\d)$/.exec(text);
  const month = found ? MONTHS[Number(found[2]) - 1] : undefined;
  return found && month ? `${month} ${Number(found[3])}, ${found[1]}` : undefined;
}

/** Django's `P`: "3:49 p.m.", "3 a.m.", "noon", "midnight". */
function clock(at: Date): string {
  const hours = at.getUTCHours();
  const minutes = at.getUTCMinutes();
  if (minutes === 0 && hours === 0) return 'midnight';
  if (minutes === 0 && hours === 12) return 'noon';
  const twelve = hours % 12 === 0 ? 12 : hours % 12;
  return `${twelve}${minutes === 0 ? '' : `:${String(minutes).padStart(2, '0')}`} ${hours < 12 ? 'a.m.' : 'p.m.'}`;
}

/** A timestamp (ISO text or a Date) → `Nov. 29, 2026, 3:49 p.m. UTC`; undefined for what is no time. */
export function readableTime(value: string | Date): string | undefined {
  const at = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(at.getTime())) return undefined;
  return `${readableDate(at.toISOString().slice(0, 10))!}, ${clock(at)} UTC`;
}
