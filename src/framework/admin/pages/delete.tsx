/** Django's deletion confirmation: what will be removed, and a form that removes it. */
import { CSRF_FIELD } from '../access.js';
import { Layout, type Frame } from './layout.js';

export function DeletePage(props: { frame: Frame; action: string; items: readonly { readonly id: string; readonly label: string }[]; cancel: string; bulk: boolean }) {
  const { frame, items } = props;
  return (
    <Layout frame={frame}>
      <p>{props.bulk ? 'Are you sure you want to delete the selected records? All of the following will be deleted:' : 'Are you sure you want to delete this record? It will be deleted:'}</p>
      <ul class="deleted-objects">
        {items.map((item) => (
          <li key={item.id}>{item.label}</li>
        ))}
      </ul>
      <form method="post" action={props.action}>
        <input type="hidden" name={CSRF_FIELD} value={frame.staff!.csrfToken} />
        {props.bulk && <input type="hidden" name="action" value="delete_selected" />}
        {props.bulk && items.map((item) => <input key={item.id} type="hidden" name="_selected_action" value={item.id} />)}
        <input type="hidden" name="post" value="yes" />
        <div class="actions">
          <button type="submit" class="danger">
            Yes, I’m sure
          </button>
          <a href={props.cancel}>No, take me back</a>
        </div>
      </form>
    </Layout>
  );
}
