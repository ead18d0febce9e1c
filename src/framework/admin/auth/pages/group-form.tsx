/** Django's group add and change form: its name, and its permissions as a filtered multi-select. */
import { CSRF_FIELD } from '../../access.js';
import { Errors } from '../../../render/browsable/fields.js';
import { Layout, type Frame } from '../../pages/layout.js';
import { SaveButtons } from '../../pages/save-buttons.js';
import { MultiSelect, type Choice } from './multi-select.js';

export interface GroupFormModel {
  readonly action: string;
  readonly name: string;
  readonly permissions: readonly string[];
  /** The permissions the form was shown with (none on the add form). */
  readonly initial: readonly string[];
  readonly choices: readonly Choice[];
  readonly errors: Readonly<Record<string, readonly string[]>>;
  readonly deleteHref?: string;
}

export function GroupFormPage(props: { frame: Frame; model: GroupFormModel }) {
  const { frame, model } = props;
  return (
    <Layout frame={frame}>
      {Object.keys(model.errors).length > 0 && <p class="errornote">Please correct the errors below.</p>}
      <Errors messages={model.errors.non_field_errors} />
      <form method="post" action={model.action} class="record-form" novalidate>
        <input type="hidden" name={CSRF_FIELD} value={frame.staff!.csrfToken} />
        <label class="field" for="id_name">
          <span>Name</span>
          <input type="text" id="id_name" name="name" value={model.name} maxLength={150} required />
          <Errors messages={model.errors.name} />
        </label>
        <MultiSelect name="permissions" label="Permissions" choices={model.choices} selected={model.permissions} initial={model.initial} errors={model.errors.permissions} other="Other permissions (names, separated by spaces)" />
        <SaveButtons addAnother deleteHref={model.deleteHref} />
      </form>
      <script src="/api/static/admin-filter.js" defer />
    </Layout>
  );
}
