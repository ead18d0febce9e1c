/** The lookup page of a related field's picker: a search box, and the records found with their ids. */
import { Layout, type Frame } from './layout.js';

export function LookupPage(props: { frame: Frame; action: string; q: string; search: boolean; items: readonly { readonly id: string; readonly label: string }[] }) {
  return (
    <Layout frame={props.frame}>
      {props.search ? (
        <form method="get" class="search" action={props.action} role="search">
          <input type="search" name="q" value={props.q} aria-label="Search" />
          <button type="submit">Search</button>
        </form>
      ) : (
        <p>This collection declares no search: its first page is listed.</p>
      )}
      <table class="results lookup">
        <thead>
          <tr>
            <th scope="col">ID</th>
            <th scope="col">Record</th>
          </tr>
        </thead>
        <tbody>
          {props.items.map((item) => (
            <tr key={item.id} data-id={item.id}>
              <td>
                <code>{item.id}</code>
              </td>
              <td class="label">{item.label}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.items.length === 0 && <p>Nothing found.</p>}
    </Layout>
  );
}
