/** A record's value on a page: text, a related record (linked where the user may view it), or a date or time. */

/** What a cell shows: its text, the related record's change page, or the ISO value of a date or time. */
export interface Shown {
  readonly text: string;
  readonly href?: string;
  readonly time?: string;
}

/** `linked`: false inside another link (a change list's first column), where the value's own link is left out. */
export function ShownValue(props: { value: Shown; linked?: boolean }) {
  const { value } = props;
  if (value.time !== undefined) return <time datetime={value.time}>{value.text}</time>;
  if (value.href !== undefined && props.linked !== false) return <a href={value.href}>{value.text}</a>;
  return <>{value.text}</>;
}
