/**
 * Django's user change form: the account's flags, its groups and its own permissions, each an input
 * where the staff user may change it (the flags a superuser's alone, the rest for who manages groups)
 * and text otherwise; the password's own form is linked, and the stored hash is never on the page.
 */
import { CSRF_FIELD } from '../../access.js';
import { Errors } from '../../../render/browsable/fields.js';
import { cellText } from '../../pages/cell.js';
import { ObjectTools } from '../../pages/object-tools.js';
import { Layout, type Frame } from '../../pages/layout.js';
import { SaveButtons } from '../../pages/save-buttons.js';
import { MultiSelect, type Choice } from './multi-select.js';

/** The flags, with Django's help texts. */
export const FLAGS: readonly { readonly name: 'is_active' | 'is_staff' | 'is_superuser'; readonly label: string; readonly help: string }[] = [
  { name: 'is_active', label: 'Active', help: 'Designates whether this user should be treated as active. Unselect this instead of deleting accounts.' },
  { name: 'is_staff', label: 'Staff status', help: 'Designates whether the user can log into this admin site.' },
  { name: 'is_superuser', label: 'Superuser status', help: 'Designates that this user has all permissions without explicitly assigning them.' },
];

export interface UserFormModel {
  readonly action: string;
  readonly id: string;
  readonly username: string;
  readonly flags: Readonly<Record<string, boolean>>;
  /** The group ids and own permission names, as shown (or as posted, on a refusal). */
  readonly groups: readonly string[];
  readonly permissions: readonly string[];
  readonly initialGroups: readonly string[];
  readonly initialPermissions: readonly string[];
  /** The groups to pick from, when the staff user manages groups (else the ids are shown as text). */
  readonly groupChoices?: readonly Choice[];
  readonly permissionChoices: readonly Choice[];
  readonly editFlags: boolean;
  readonly editMemberships: boolean;
  readonly passwordHref?: string;
  readonly errors: Readonly<Record<string, readonly string[]>>;
}

function Shown(props: { entries: readonly [string, unknown][] }) {
  if (props.entries.length === 0) return null;
  return (
    <dl class="readonly">
      {props.entries.map(([name, value]) => [<dt key={`${name}-name`}>{name}</dt>, <dd key={`${name}-value`}>{cellText(value)}</dd>])}
    </dl>
  );
}

export function UserFormPage(props: { frame: Frame; model: UserFormModel }) {
  const { frame, model } = props;
  const readOnly: [string, unknown][] = [
    ['id', model.id],
    ['username', model.username],
    ...(model.editFlags ? [] : FLAGS.map(({ name }): [string, unknown] => [name, model.flags[name]])),
    ...(model.editMemberships ? [] : ([['groups', model.groups], ['user_permissions', model.permissions]] as [string, unknown][])),
  ];
  return (
    <Layout frame={frame}>
      <ObjectTools passwordHref={model.passwordHref} />
      {Object.keys(model.errors).length > 0 && <p class="errornote">Please correct the errors below.</p>}
      <Errors messages={model.errors.non_field_errors} />
      <Shown entries={readOnly} />
      {(model.editFlags || model.editMemberships) && (
        <form method="post" action={model.action} class="record-form" novalidate>
          <input type="hidden" name={CSRF_FIELD} value={frame.staff!.csrfToken} />
          {model.editFlags &&
            FLAGS.map((flag) => (
              <label class="field checkbox" key={flag.name} for={`id_${flag.name}`}>
                <span>{flag.label}</span>
                <input type="checkbox" id={`id_${flag.name}`} name={flag.name} value="true" checked={model.flags[flag.name]} aria-describedby={`id_${flag.name}_help`} />
                <small id={`id_${flag.name}_help`}>{flag.help}</small>
                <Errors messages={model.errors[flag.name]} />
              </label>
            ))}
          {model.editMemberships && model.groupChoices && (
            <MultiSelect name="groups" label="Groups" choices={model.groupChoices} selected={model.groups} initial={model.initialGroups} errors={model.errors.groups} />
          )}
          {model.editMemberships && (
            <MultiSelect
              name="user_permissions"
              label="User permissions"
              choices={model.permissionChoices}
              selected={model.permissions}
              initial={model.initialPermissions}
              errors={model.errors.user_permissions}
              other="Other permissions (names, separated by spaces)"
            />
          )}
          <SaveButtons addAnother={false} />
        </form>
      )}
      <script src="/api/static/admin-filter.js" defer />
    </Layout>
  );
}
