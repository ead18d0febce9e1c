/** The admin's index: the collections the staff user may view, by group, each linking to its change list. */
import { Layout, type Frame } from './layout.js';

export interface IndexGroup {
  readonly label: string;
  readonly collections: readonly { readonly name: string; readonly href: string; readonly addHref?: string }[];
}

export function IndexPage(props: { frame: Frame; groups: readonly IndexGroup[] }) {
  return (
    <Layout frame={props.frame}>
      {props.groups.length === 0 && <p>You don’t have permission to view or edit anything.</p>}
      {props.groups.map((group) => (
        <table class="module" key={group.label}>
          <caption>{group.label}</caption>
          <tbody>
            {group.collections.map((collection) => (
              <tr key={collection.name}>
                <th scope="row">
                  <a href={collection.href}>{collection.name}</a>
                </th>
                <td>{collection.addHref && <a href={collection.addHref}>Add</a>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </Layout>
  );
}
