/**
 * The browsable API page, as JSX rendered to a string: Preact escapes every
 * value it renders, so record data can never become markup. The page's
 * behaviour lives in /api/static/browsable.js; forms send JSON from there (multipart/form-data where
 * they hold a file field).
 */
import type { ComponentChildren } from 'preact';
import { stringifyJson } from '../../../core/json.js';
import type { Serializer } from '../../declare/serializer.js';
import { FieldInput, RelationInput, relationWrites } from './fields.js';

export interface PageLink {
  readonly label: string;
  readonly href: string;
}

export interface ListControls {
  readonly search: boolean;
  readonly searchValue: string;
  readonly ordering: readonly string[];
  readonly orderingValue: string;
  /** Field → lookups it may be filtered with. */
  readonly filters: ReadonlyArray<readonly [string, readonly string[]]>;
  /** The request's own filter values, by parameter name. */
  readonly values: ReadonlyMap<string, string>;
}

export interface PageModel {
  readonly title: string;
  readonly breadcrumbs: readonly PageLink[];
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly statusText: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: unknown;
  readonly user: { readonly username: string } | null;
  readonly csrfToken?: string;
  /** Where the login form posts, when session authentication is on. */
  readonly loginUrl?: string;
  readonly logoutUrl?: string;
  readonly pagination?: { readonly previous: string | null; readonly next: string | null };
  readonly controls?: ListControls;
  /** A create form (lists) or an edit form (details) for the serializer's writable fields, with a button per action served. */
  readonly form?: {
    readonly kind: 'create' | 'edit';
    readonly serializer: Serializer;
    readonly values?: Record<string, unknown>;
    readonly buttons: readonly { readonly method: 'POST' | 'PUT' | 'PATCH'; readonly label: string }[];
  };
  readonly allowDelete?: boolean;
  /** The collection's custom actions on this list or record (DRF's "Extra Actions"). */
  readonly extraActions?: readonly PageLink[];
  /** The collections nested under the record shown. */
  readonly nested?: readonly PageLink[];
  /** A live collection's list: the stream of its changes, on which the page reads the list again. */
  readonly live?: string;
}

/** A line of links (the custom actions, the nested collections); nothing when there are none. */
function Links(props: { title: string; links: readonly PageLink[] | undefined }) {
  if (!props.links || props.links.length === 0) return null;
  return (
    <nav class="extra-actions">
      {props.title}:{' '}
      {props.links.map((link) => (
        <a key={link.href} href={link.href}>
          {link.label}
        </a>
      ))}
    </nav>
  );
}

function Section(props: { title: string; children: ComponentChildren }) {
  return (
    <section class="panel">
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** A body field the model's rules read on updates (never stored or shown, like the current password): sent only when filled in. */
function UpdateInput(props: { name: string }) {
  return (
    <label class="field" for={`field-${props.name}`}>
      <span>{props.name}</span>
      <input type="password" id={`field-${props.name}`} name={props.name} data-kind="password" autocomplete="current-password" />
    </label>
  );
}

function RecordForm(props: { form: NonNullable<PageModel['form']>; path: string }) {
  const { serializer, kind, values = {} } = props.form;
  // A form with a file field is sent as multipart/form-data (its script reads the enctype).
  const uploads = serializer.writable.some((name) => serializer.model.fields[name]!.file !== undefined);
  return (
    <form class="record-form" data-url={props.path} enctype={uploads ? 'multipart/form-data' : undefined}>
      {serializer.writable.map((name) => (
        <FieldInput
          key={name}
          name={serializer.shown(name)}
          field={serializer.model.fields[name]!}
          value={values[serializer.shown(name)]}
          hidden={serializer.hidden.has(name)}
          creating={kind === 'create'}
        />
      ))}
      {serializer.relationInputs.map((name) => (
        <RelationInput key={name} name={serializer.shown(name)} value={values[serializer.shown(name)]} writes={relationWrites(serializer, name)} />
      ))}
      {kind === 'edit' && serializer.updateInputs.map((name) => <UpdateInput key={name} name={name} />)}
      <div class="actions">
        {props.form.buttons.map(({ method, label }, index) => (
          <button key={method} type="submit" data-method={method} class={index > 0 ? 'secondary' : undefined}>
            {label}
          </button>
        ))}
      </div>
    </form>
  );
}

function Controls(props: { controls: ListControls }) {
  const { controls } = props;
  return (
    <form id="list-controls" class="controls" method="get">
      {controls.search && (
        <label class="field">
          <span>search</span>
          <input type="search" name="search" value={controls.searchValue} />
        </label>
      )}
      {controls.ordering.length > 0 && (
        <label class="field">
          <span>ordering</span>
          <select name="ordering">
            <option value="">(default)</option>
            {controls.ordering.flatMap((field) => [
              <option key={field} value={field} selected={controls.orderingValue === field}>
                {field} ascending
              </option>,
              <option key={`-${field}`} value={`-${field}`} selected={controls.orderingValue === `-${field}`}>
                {field} descending
              </option>,
            ])}
          </select>
        </label>
      )}
      {controls.filters.map(([field, lookups]) => {
        const active = lookups.find((lookup) => controls.values.has(lookup === 'exact' ? field : `${field}__${lookup}`)) ?? 'exact';
        const value = controls.values.get(active === 'exact' ? field : `${field}__${active}`) ?? '';
        return (
          <div class="field filter" key={field} data-field={field}>
            <span>{field}</span>
            <select class="lookup" aria-label={`${field} lookup`}>
              {lookups.map((lookup) => (
                <option key={lookup} value={lookup} selected={lookup === active}>
                  {lookup}
                </option>
              ))}
            </select>
            <input type="text" class="value" aria-label={`${field} value`} value={value} />
          </div>
        );
      })}
      <div class="actions">
        <button type="submit">Apply</button>
      </div>
    </form>
  );
}

function Account(props: { model: PageModel }) {
  const { user, loginUrl, logoutUrl } = props.model;
  if (user) {
    return (
      <div class="account">
        <span>
          Logged in as <strong>{user.username}</strong>
        </span>
        {logoutUrl && (
          <button type="button" id="logout" data-url={logoutUrl} class="secondary">
            Log out
          </button>
        )}
      </div>
    );
  }
  if (!loginUrl) return <div class="account">Not logged in</div>;
  return (
    <form class="account" id="login" data-url={loginUrl}>
      <input name="username" placeholder="username" autocomplete="username" aria-label="username" />
      <input name="password" type="password" placeholder="password" autocomplete="current-password" aria-label="password" />
      <button type="submit">Log in</button>
    </form>
  );
}

export function Page(props: { model: PageModel }) {
  const { model } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {model.csrfToken && <meta name="csrf-token" content={model.csrfToken} />}
        <title>{`${model.title} – Restfold API`}</title>
        <link rel="stylesheet" href="/api/static/browsable.css" />
        <script src="/api/static/browsable.js" defer />
      </head>
      <body>
        <header>
          <a class="brand" href="/api/v1/">
            Restfold API
          </a>
          <Account model={model} />
        </header>
        <main>
          <nav class="breadcrumbs">
            {model.breadcrumbs.map((crumb, index) => (
              <span key={crumb.href}>
                {index > 0 && ' / '}
                <a href={crumb.href}>{crumb.label}</a>
              </span>
            ))}
          </nav>
          <h1>{model.title}</h1>
          <Links title="Extra actions" links={model.extraActions} />
          <Links title="Nested" links={model.nested} />
          {model.allowDelete && (
            <button type="button" id="delete" class="danger" data-url={model.path}>
              Delete
            </button>
          )}
          {model.live && (
            <p class="live" id="live" data-url={model.live}>
              Live: the list below is read again as its records change.
            </p>
          )}
          <div class="response">
            <div class="request-line">
              <strong>{model.method}</strong> <code>{model.path}</code>
            </div>
            <pre class="headers">
              {`HTTP ${model.status} ${model.statusText}\n`}
              {model.headers.map(([name, value]) => `${name}: ${value}\n`).join('')}
            </pre>
            <pre class="body" id="response-body">
              {model.body === undefined ? '' : stringifyJson(model.body, 2)}
            </pre>
          </div>
          {model.pagination && (
            <nav class="pagination">
              {model.pagination.previous ? <a href={model.pagination.previous} rel="prev">« Previous</a> : <span>« Previous</span>}
              {model.pagination.next ? <a href={model.pagination.next} rel="next">Next »</a> : <span>Next »</span>}
            </nav>
          )}
          {model.controls && (
            <Section title="Filter, search and order">
              <Controls controls={model.controls} />
            </Section>
          )}
          {model.form && (
            <Section title={model.form.kind === 'create' ? 'Create' : 'Edit'}>
              <RecordForm form={model.form} path={model.path} />
            </Section>
          )}
          <div id="result" role="status" aria-live="polite" />
        </main>
      </body>
    </html>
  );
}
