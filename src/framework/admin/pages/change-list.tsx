/**
 * Django's change list: search, the declared filters in a sidebar, ordering by column header,
 * pagination with a count, and a checkbox per row for the bulk actions (a form POSTed back to the
 * list, which answers with a confirmation page first).
 */
import { CSRF_FIELD } from '../access.js';
import { Layout, type Frame } from './layout.js';
import { ShownValue, type Shown } from './value.js';

export interface ListFilter {
  readonly name: string;
  /** Choices to pick from (a boolean's, a choice field's); none: a text box. */
  readonly choices?: readonly string[];
  /** A foreign key's related records, a link each (Django's RelatedFieldListFilter). */
  readonly links?: readonly { readonly value: string; readonly text: string }[];
  /** A foreign key with too many related records for links: the lookup page of the text box's picker. */
  readonly lookup?: string;
  readonly value: string;
}

export interface ChangeListModel {
  readonly path: string;
  readonly columns: readonly string[];
  /** The column whose header orders by it, by column. */
  readonly orderable: ReadonlySet<string>;
  readonly rows: readonly { readonly id: string; readonly cells: readonly Shown[] }[];
  readonly count?: number;
  readonly search: boolean;
  readonly query: URLSearchParams;
  readonly filters: readonly ListFilter[];
  readonly previous?: string;
  readonly next?: string;
  readonly addHref?: string;
  /** "Add article". */
  readonly addLabel: string;
  readonly canDelete: boolean;
  /** The app's declared bulk actions (besides delete). */
  readonly actions: readonly { readonly name: string; readonly label: string }[];
}

/** The list's URL with `changes` applied to its query (an empty value removes the parameter). */
function withQuery(model: ChangeListModel, changes: Record<string, string>): string {
  const query = new URLSearchParams(model.query);
  query.delete('p');
  for (const [name, value] of Object.entries(changes)) {
    if (value === '') query.delete(name);
    else query.set(name, value);
  }
  return query.size > 0 ? `${model.path}?${query.toString()}` : model.path;
}

function Header(props: { model: ChangeListModel; column: string }) {
  const { model, column } = props;
  if (!model.orderable.has(column)) return <th scope="col">{column}</th>;
  const current = model.query.get('o') ?? '';
  const sorted = current === column ? 'ascending' : current === `-${column}` ? 'descending' : undefined;
  return (
    <th scope="col" aria-sort={sorted}>
      <a href={withQuery(model, { o: current === column ? `-${column}` : column })}>{column}</a>
      {sorted === 'ascending' ? ' ▲' : sorted === 'descending' ? ' ▼' : ''}
    </th>
  );
}

/** A foreign key's filter with few related records: "All" and a link per record, the chosen one marked. */
function FilterLinks(props: { model: ChangeListModel; filter: ListFilter }) {
  const { model, filter } = props;
  const links = [{ value: '', text: 'All' }, ...(filter.links ?? [])];
  return (
    <nav class="filter-links" aria-label={`By ${filter.name}`}>
      <h3>By {filter.name}</h3>
      <ul>
        {links.map((link) => (
          <li key={link.value} class={link.value === filter.value ? 'selected' : undefined}>
            <a href={withQuery(model, { [filter.name]: link.value })} aria-current={link.value === filter.value ? 'true' : undefined}>
              {link.text}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function FilterInput(props: { filter: ListFilter }) {
  const { filter } = props;
  const id = `filter-${filter.name}`;
  if (filter.choices) {
    return (
      <select id={id} name={filter.name}>
        <option value="">All</option>
        {filter.choices.map((choice) => (
          <option key={choice} value={choice} selected={choice === filter.value}>
            {choice}
          </option>
        ))}
      </select>
    );
  }
  return <input type="text" id={id} name={filter.name} value={filter.value} data-lookup={filter.lookup} autocomplete={filter.lookup ? 'off' : undefined} />;
}

function Sidebar(props: { model: ChangeListModel }) {
  const { model } = props;
  if (model.filters.length === 0) return null;
  const inputs = model.filters.filter((filter) => !filter.links);
  return (
    <aside class="filters" aria-label="Filter">
      <h2>Filter</h2>
      {model.filters.filter((filter) => filter.links).map((filter) => <FilterLinks key={filter.name} model={model} filter={filter} />)}
      {inputs.length > 0 && (
        <form method="get" action={model.path}>
          {[...model.query]
            .filter(([name]) => !inputs.some((filter) => filter.name === name) && name !== 'p')
            .map(([name, value]) => (
              <input key={name} type="hidden" name={name} value={value} />
            ))}
          {inputs.map((filter) => (
            <div class={filter.lookup ? 'related' : undefined} key={filter.name}>
              <label class="field" for={`filter-${filter.name}`}>
                <span>By {filter.name}</span>
                <FilterInput filter={filter} />
              </label>
              {filter.lookup && (
                <a class="related-lookup" href={filter.lookup} target="_blank" rel="noopener" data-for={`filter-${filter.name}`}>
                  Look up {filter.name}
                </a>
              )}
            </div>
          ))}
          <button type="submit">Filter</button>
        </form>
      )}
    </aside>
  );
}

export function ChangeListPage(props: { frame: Frame; model: ChangeListModel }) {
  const { frame, model } = props;
  const selectable = model.canDelete || model.actions.length > 0;
  return (
    <Layout frame={frame}>
      {model.addHref && (
        <p>
          <a class="button" href={model.addHref}>
            {model.addLabel}
          </a>
        </p>
      )}
      {model.search && (
        <form method="get" class="search" action={model.path} role="search">
          <input type="search" name="q" value={model.query.get('q') ?? ''} aria-label="Search" />
          <button type="submit">Search</button>
        </form>
      )}
      <div class="change-list">
        <form method="post" action={model.path}>
          <input type="hidden" name={CSRF_FIELD} value={frame.staff!.csrfToken} />
          {selectable && (
            <div class="actions">
              <label for="action">Action: </label>
              <select id="action" name="action">
                {model.canDelete && <option value="delete_selected">Delete selected</option>}
                {model.actions.map((action) => (
                  <option key={action.name} value={action.name}>
                    {action.label}
                  </option>
                ))}
              </select>
              <button type="submit">Go</button>
            </div>
          )}
          <table class="results">
            <thead>
              <tr>
                {selectable && <th scope="col">Select</th>}
                {model.columns.map((column) => (
                  <Header key={column} model={model} column={column} />
                ))}
              </tr>
            </thead>
            <tbody>
              {model.rows.map((row) => (
                <tr key={row.id}>
                  {selectable && (
                    <td>
                      <input type="checkbox" name="_selected_action" value={row.id} aria-label={`Select ${row.id}`} />
                    </td>
                  )}
                  {row.cells.map((cell, index) => (
                    <td key={model.columns[index]}>
                      {index === 0 ? (
                        <a href={`${model.path}${encodeURIComponent(row.id)}/change/`}>
                          <ShownValue value={cell} linked={false} />
                        </a>
                      ) : (
                        <ShownValue value={cell} />
                      )}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </form>
        <Sidebar model={model} />
      </div>
      <nav class="pagination" aria-label="Pages">
        {model.previous && (
          <a href={model.previous} rel="prev">
            « Previous
          </a>
        )}{' '}
        {model.count !== undefined && <span class="count">{`${model.count} ${model.count === 1 ? 'result' : 'results'}`}</span>}{' '}
        {model.next && (
          <a href={model.next} rel="next">
            Next »
          </a>
        )}
      </nav>
    </Layout>
  );
}
