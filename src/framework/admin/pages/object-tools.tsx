/** Django's object tools above a change form: the record's history, and its password form where it has a password. */
export function ObjectTools(props: { historyHref?: string; passwordHref?: string }) {
  if (!props.historyHref && !props.passwordHref) return null;
  return (
    <p class="object-tools">
      {props.historyHref && <a href={props.historyHref}>History</a>}{' '}
      {props.passwordHref && <a href={props.passwordHref}>Change password</a>}
    </p>
  );
}
