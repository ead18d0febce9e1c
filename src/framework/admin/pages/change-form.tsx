/**
 * Django's add and change forms, from the serializer's field declarations: the browsable API's own
 * inputs (render/browsable/fields.tsx), posted as a form; a refused write's messages beside each
 * field and at the top. A related field is a text input of the ids it names with a link to its
 * collection's lookup page (the admin's script turns it into a search-as-you-type picker). A staff
 * user who may view but not change sees the values, not the form. The inlines follow.
 */
import type { Serializer } from '../../declare/serializer.js';
import { FieldInput, RelationInput, relationWrites } from '../../render/browsable/fields.js';
import { CSRF_FIELD } from '../access.js';
import type { InlineModel } from '../inlines.js';
import { cellText } from './cell.js';
import { ObjectTools } from './object-tools.js';
import { SaveButtons } from './save-buttons.js';
import { Layout, type Frame } from './layout.js';

export interface ChangeFormModel {
  readonly serializer: Serializer;
  readonly creating: boolean;
  readonly values: Readonly<Record<string, unknown>>;
  readonly errors: Readonly<Record<string, readonly string[]>>;
  readonly action: string;
  readonly deleteHref?: string;
  readonly historyHref?: string;
  readonly passwordHref?: string;
  /** False: shown read-only (the user has `.view` but not `.change`). */
  readonly editable: boolean;
  /** The fields the app declares read-only in the admin, by shown name. */
  readonly readOnly: ReadonlySet<string>;
  /** The lookup page of each related field, by shown name. */
  readonly lookups: Readonly<Record<string, string>>;
  readonly inlines: readonly InlineModel[];
}

function ReadOnly(props: { values: Readonly<Record<string, unknown>>; names: readonly string[] }) {
  if (props.names.length === 0) return null;
  return (
    <dl class="readonly">
      {props.names.map((name) => [<dt key={`${name}-name`}>{name}</dt>, <dd key={`${name}-value`}>{cellText(props.values[name])}</dd>])}
    </dl>
  );
}

/** The form's inputs for `serializer`'s writable fields and relations, a related one with its lookup link. */
function Inputs(props: { serializer: Serializer; values: Readonly<Record<string, unknown>>; errors: Readonly<Record<string, readonly string[]>>; creating: boolean; skip: ReadonlySet<string>; lookups: Readonly<Record<string, string>>; prefix?: string }) {
  const { serializer, values, errors, lookups } = props;
  const lookup = (shown: string) =>
    lookups[shown] && (
      <a class="related-lookup" href={lookups[shown]} target="_blank" rel="noopener" data-for={`field-${shown}`}>
        Look up {shown}
      </a>
    );
  return (
    <>
      {serializer.writable
        .filter((name) => !props.skip.has(serializer.shown(name)))
        .map((name) => {
          const shown = serializer.shown(name);
          const field = serializer.model.fields[name]!;
          if (lookups[shown]) {
            // A foreign key: the id as text, so it is not a number spinner, with its lookup.
            return (
              <div class="related" key={name}>
                <RelationInput name={shown} value={values[shown] === undefined || values[shown] === null ? '' : String(values[shown])} writes="slug" errors={errors[shown]} lookup={lookups[shown]} />
                {lookup(shown)}
              </div>
            );
          }
          return <FieldInput key={name} name={shown} field={field} value={values[shown]} hidden={serializer.hidden.has(name)} creating={props.creating} errors={errors[shown]} utcPicker />;
        })}
      {serializer.relationInputs
        .filter((name) => !props.skip.has(serializer.shown(name)))
        .map((name) => {
          const shown = serializer.shown(name);
          return (
            <div class="related" key={name}>
              <RelationInput name={shown} value={values[shown]} writes={relationWrites(serializer, name)} errors={errors[shown]} lookup={lookups[shown]} />
              {lookup(shown)}
            </div>
          );
        })}
    </>
  );
}

function Inline(props: { inline: InlineModel; csrfToken: string }) {
  const { inline } = props;
  return (
    <section class="inline-group" aria-label={inline.name}>
      <h2>{inline.name}</h2>
      <table class="results">
        <thead>
          <tr>
            {inline.columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {inline.rows.map((row) => (
            <tr key={row.id}>
              {row.cells.map((cell, index) => (
                <td key={inline.columns[index]}>{cellText(cell)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {inline.count !== undefined && <p class="count">{`${inline.count} ${inline.count === 1 ? 'record' : 'records'}`}</p>}
      {inline.add && (
        <form method="post" action={inline.add.action} class="record-form inline-add" novalidate>
          <h3>Add another {inline.name}</h3>
          <input type="hidden" name={CSRF_FIELD} value={props.csrfToken} />
          {Object.keys(inline.add.errors).length > 0 && <p class="errornote">Please correct the errors below.</p>}
          <Inputs serializer={inline.add.serializer} values={inline.add.values} errors={inline.add.errors} creating skip={new Set()} lookups={inline.add.lookups} />
          <div class="actions">
            <button type="submit">Add</button>
          </div>
        </form>
      )}
    </section>
  );
}

export function ChangeFormPage(props: { frame: Frame; model: ChangeFormModel }) {
  const { frame, model } = props;
  const { serializer, values, errors } = model;
  const inlines = model.inlines.map((inline) => <Inline key={inline.name} inline={inline} csrfToken={frame.staff!.csrfToken} />);
  if (!model.editable) {
    return (
      <Layout frame={frame}>
        <ObjectTools historyHref={model.historyHref} passwordHref={model.passwordHref} />
        <ReadOnly values={values} names={Object.keys(values)} />
        {inlines}
      </Layout>
    );
  }
  // On a change, what the form does not send is shown as text: the API's read-only fields and the admin's.
  const writable = new Set([...serializer.writable, ...serializer.relationInputs].map((name) => serializer.shown(name)));
  const shownReadOnly = model.creating ? [] : Object.keys(values).filter((name) => !writable.has(name) || model.readOnly.has(name));
  return (
    <Layout frame={frame}>
      <ObjectTools historyHref={model.historyHref} passwordHref={model.passwordHref} />
      {Object.keys(errors).length > 0 && <p class="errornote">Please correct the errors below.</p>}
      {errors.non_field_errors && (
        <ul class="errorlist">
          {errors.non_field_errors.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
      <ReadOnly values={values} names={shownReadOnly} />
      <form method="post" action={model.action} class="record-form" novalidate enctype={serializer.writable.some((name) => serializer.model.fields[name]!.file) ? 'multipart/form-data' : undefined}>
        <input type="hidden" name={CSRF_FIELD} value={frame.staff!.csrfToken} />
        <Inputs serializer={serializer} values={values} errors={errors} creating={model.creating} skip={model.readOnly} lookups={model.lookups} />
        <SaveButtons addAnother deleteHref={model.deleteHref} />
      </form>
      {inlines}
    </Layout>
  );
}
