/**
 * Django's add and change forms, from the serializer's field declarations: the browsable API's own
 * inputs (render/browsable/fields.tsx), posted as a form; a refused write's messages beside each
 * field and at the top. A staff user who may view but not change sees the values, not the form.
 */
import type { Serializer } from '../../declare/serializer.js';
import { FieldInput, RelationInput, relationWrites } from '../../render/browsable/fields.js';
import { CSRF_FIELD } from '../access.js';
import { cellText } from './cell.js';
import { ObjectTools } from './object-tools.js';
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
}

function ReadOnly(props: { model: ChangeFormModel }) {
  return (
    <dl class="readonly">
      {Object.entries(props.model.values).map(([name, value]) => [<dt key={`${name}-name`}>{name}</dt>, <dd key={`${name}-value`}>{cellText(value)}</dd>])}
    </dl>
  );
}

export function ChangeFormPage(props: { frame: Frame; model: ChangeFormModel }) {
  const { frame, model } = props;
  const { serializer, values, errors } = model;
  if (!model.editable) {
    return (
      <Layout frame={frame}>
        <ObjectTools historyHref={model.historyHref} passwordHref={model.passwordHref} />
        <ReadOnly model={model} />
      </Layout>
    );
  }
  const shownErrors = Object.keys(errors).length > 0;
  return (
    <Layout frame={frame}>
      <ObjectTools historyHref={model.historyHref} passwordHref={model.passwordHref} />
      {shownErrors && <p class="errornote">Please correct the errors below.</p>}
      {errors.non_field_errors && (
        <ul class="errorlist">
          {errors.non_field_errors.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
      <form method="post" action={model.action} class="record-form" novalidate>
        <input type="hidden" name={CSRF_FIELD} value={frame.staff!.csrfToken} />
        {/* Its forms post urlencoded, which carries no file: files are uploaded through the API (the browsable form). */}
        {serializer.writable.filter((name) => !serializer.model.fields[name]!.file).map((name) => {
          const shown = serializer.shown(name);
          return <FieldInput key={name} name={shown} field={serializer.model.fields[name]!} value={values[shown]} hidden={serializer.hidden.has(name)} creating={model.creating} errors={errors[shown]} />;
        })}
        {serializer.relationInputs.map((name) => {
          const shown = serializer.shown(name);
          return <RelationInput key={name} name={shown} value={values[shown]} writes={relationWrites(serializer, name)} errors={errors[shown]} />;
        })}
        <div class="actions">
          <button type="submit" name="_save">
            Save
          </button>
          <button type="submit" name="_addanother" class="secondary">
            Save and add another
          </button>
          <button type="submit" name="_continue" class="secondary">
            Save and continue editing
          </button>
          {model.deleteHref && (
            <a class="danger" href={model.deleteHref}>
              Delete
            </a>
          )}
        </div>
      </form>
    </Layout>
  );
}
