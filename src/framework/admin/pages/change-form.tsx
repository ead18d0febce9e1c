/**
 * Django's add and change forms, from the serializer's field declarations: the browsable API's own
 * inputs (render/browsable/fields.tsx), posted as a form; a refused write's messages beside each
 * field and at the top. A related field is a text input of the ids it names with a link to its
 * collection's lookup page (the admin's script turns it into a search-as-you-type picker), and a
 * foreign key's box the record it names by its display name beside it (Django's raw-id widget); a
 * nested record the form names by its foreign key is not shown again above the form. A staff
 * user who may view but not change sees the values, not the form. The inlines follow.
 */
import type { Serializer } from '../../declare/serializer.js';
import { FieldInput, RelationInput, relationWrites } from '../../render/browsable/fields.js';
import { CSRF_FIELD } from '../access.js';
import type { InlineModel, InlineRow } from '../inlines.js';
import { cellText } from './cell.js';
import { ObjectTools } from './object-tools.js';
import { SaveButtons } from './save-buttons.js';
import { Layout, type Frame } from './layout.js';
import { ShownValue, type Shown } from './value.js';

export interface ChangeFormModel {
  readonly serializer: Serializer;
  readonly creating: boolean;
  readonly values: Readonly<Record<string, unknown>>;
  /** The record's values as shown read-only (a related record by its name, a time readably), by shown name; a foreign key's name is shown beside its box too. */
  readonly shown: Readonly<Record<string, Shown>>;
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

/** The model field a serializer shows as `shown`. */
function fieldOf(serializer: Serializer, shown: string) {
  const name = serializer.writable.find((candidate) => serializer.shown(candidate) === shown);
  return name === undefined ? undefined : serializer.model.fields[name];
}

/**
 * The nested records that name the record a foreign key among `names` names (`author` beside
 * `author_id`): the form shows it once, by the key (as its box, with its name beside it, or read-only by its name).
 */
function nestedTwins(serializer: Serializer, names: ReadonlySet<string>): Set<string> {
  return new Set(
    Object.entries(serializer.nested)
      .filter(([, nested]) => names.has(serializer.shown(nested.source)))
      .map(([name]) => serializer.shown(name)),
  );
}

/** The related record a foreign key's box names, beside it, where it was found (else nothing: the id is in the box). */
function RelatedName(props: { value: unknown; shown: Shown | undefined }) {
  const { value, shown } = props;
  if (!shown || value === undefined || value === null || value === '' || shown.text === String(value)) return null;
  return (
    <strong class="related-name">
      <ShownValue value={shown} />
    </strong>
  );
}

function ReadOnly(props: { model: ChangeFormModel; names: readonly string[] }) {
  if (props.names.length === 0) return null;
  const { shown, values } = props.model;
  return (
    <dl class="readonly">
      {props.names.map((name) => [
        <dt key={`${name}-name`}>{name}</dt>,
        <dd key={`${name}-value`}>
          <ShownValue value={shown[name] ?? { text: cellText(values[name]) }} />
        </dd>,
      ])}
    </dl>
  );
}

/** The form's inputs for `serializer`'s writable fields and relations, a related one with its lookup link. */
function Inputs(props: {
  serializer: Serializer;
  values: Readonly<Record<string, unknown>>;
  /** The related records the values name, by display name (ChangeFormModel.shown). */
  shown: Readonly<Record<string, Shown>>;
  errors: Readonly<Record<string, readonly string[]>>;
  creating: boolean;
  skip: ReadonlySet<string>;
  lookups: Readonly<Record<string, string>>;
}) {
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
                <RelatedName value={values[shown]} shown={props.shown[shown]} />
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

/** An inline row's cell: an input where the row's field is changed here, else its value. */
function RowCell(props: { inline: InlineModel; row: InlineRow; index: number; column: number }) {
  const { inline, row, column } = props;
  const name = inline.columns[column]!;
  const edit = inline.edit;
  const field = edit?.inputs.has(name) ? fieldOf(edit.serializer, name) : undefined;
  if (!edit || !field) return <ShownValue value={row.cells[column]!} />;
  return <FieldInput name={`${inline.name}-${props.index}-${name}`} field={field} value={row.values[name]} hidden={false} creating={false} errors={row.errors[name]} utcPicker />;
}

/** Django's TabularInline: the nested records in a table, as inputs where the user may change them, each with a delete box where they may delete. */
function InlineRows(props: { inline: InlineModel }) {
  const { inline } = props;
  const edit = inline.edit;
  return (
    <table class="results tabular">
      <thead>
        <tr>
          {inline.columns.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
          {edit?.deletable && <th scope="col">Delete?</th>}
        </tr>
      </thead>
      <tbody>
        {inline.rows.map((row, index) => (
          <tr key={row.id}>
            {inline.columns.map((column, at) => (
              <td key={column}>
                {at === 0 && edit && <input type="hidden" name={`${inline.name}-${index}-id`} value={row.id} />}
                <RowCell inline={inline} row={row} index={index} column={at} />
              </td>
            ))}
            {edit?.deletable && (
              <td>
                <input type="checkbox" name={`${inline.name}-${index}-DELETE`} checked={row.deleting} aria-label={`Delete ${inline.names.one} ${row.id}`} />
              </td>
            )}
            {row.errors.non_field_errors && (
              <td>
                <Errors messages={row.errors.non_field_errors} />
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Errors(props: { messages: readonly string[] }) {
  return (
    <ul class="errorlist">
      {props.messages.map((message) => (
        <li key={message}>{message}</li>
      ))}
    </ul>
  );
}

function Inline(props: { inline: InlineModel; csrfToken: string }) {
  const { inline } = props;
  return (
    <section class="inline-group" aria-label={inline.name}>
      <h2>{inline.names.many}</h2>
      {inline.unlisted.length > 0 && <Errors messages={inline.unlisted} />}
      {inline.edit ? (
        <form method="post" action={inline.edit.action} class="inline-rows" novalidate>
          <input type="hidden" name={CSRF_FIELD} value={props.csrfToken} />
          <InlineRows inline={inline} />
          <div class="actions">
            <button type="submit">Save {inline.names.many}</button>
          </div>
        </form>
      ) : (
        <InlineRows inline={inline} />
      )}
      {inline.count !== undefined && <p class="count">{`${inline.count} ${inline.count === 1 ? 'record' : 'records'}`}</p>}
      {inline.add && (
        <form method="post" action={inline.add.action} class="record-form inline-add" novalidate>
          <h3>Add another {inline.names.one}</h3>
          <input type="hidden" name={CSRF_FIELD} value={props.csrfToken} />
          {Object.keys(inline.add.errors).length > 0 && <p class="errornote">Please correct the errors below.</p>}
          <Inputs serializer={inline.add.serializer} values={inline.add.values} shown={{}} errors={inline.add.errors} creating skip={new Set()} lookups={inline.add.lookups} />
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
  // A related record once: by its foreign key, where the form shows that (as an input or read-only).
  const once = (names: readonly string[]): string[] => {
    const twins = nestedTwins(serializer, new Set([...names, ...serializer.writable.map((name) => serializer.shown(name))]));
    return names.filter((name) => !twins.has(name));
  };
  if (!model.editable) {
    return (
      <Layout frame={frame}>
        <ObjectTools historyHref={model.historyHref} passwordHref={model.passwordHref} />
        <ReadOnly model={model} names={once(Object.keys(values))} />
        {inlines}
      </Layout>
    );
  }
  // On a change, what the form does not send is shown as text: the API's read-only fields and the admin's.
  const writable = new Set([...serializer.writable, ...serializer.relationInputs].map((name) => serializer.shown(name)));
  const shownReadOnly = model.creating ? [] : once(Object.keys(values)).filter((name) => !writable.has(name) || model.readOnly.has(name));
  return (
    <Layout frame={frame}>
      <ObjectTools historyHref={model.historyHref} passwordHref={model.passwordHref} />
      {Object.keys(errors).length > 0 && <p class="errornote">Please correct the errors below.</p>}
      {errors.non_field_errors && <Errors messages={errors.non_field_errors} />}
      <ReadOnly model={model} names={shownReadOnly} />
      <form method="post" action={model.action} class="record-form" novalidate enctype={serializer.writable.some((name) => serializer.model.fields[name]!.file) ? 'multipart/form-data' : undefined}>
        <input type="hidden" name={CSRF_FIELD} value={frame.staff!.csrfToken} />
        <Inputs serializer={serializer} values={values} shown={model.shown} errors={errors} creating={model.creating} skip={model.readOnly} lookups={model.lookups} />
        <SaveButtons addAnother deleteHref={model.deleteHref} />
      </form>
      {inlines}
    </Layout>
  );
}
