/**
 * Django's admin password change form: the new password twice, never the stored one nor its hash;
 * on the user's own account, the old password first (the API asks it of anyone changing their own).
 */
import { CSRF_FIELD } from '../access.js';
import { Layout, type Frame } from './layout.js';

/** Django's name for the current password on its own password change form. */
export const OLD_PASSWORD = 'old_password';

const OLD = { name: OLD_PASSWORD, label: 'Old password', autocomplete: 'current-password' };
const INPUTS = [
  { name: 'password1', label: 'Password', autocomplete: 'new-password' },
  { name: 'password2', label: 'Password (again)', autocomplete: 'new-password' },
];

export function PasswordPage(props: { frame: Frame; action: string; current: boolean; errors: Readonly<Record<string, readonly string[]>> }) {
  const { frame, errors } = props;
  return (
    <Layout frame={frame}>
      {Object.keys(errors).length > 0 && <p class="errornote">Please correct the errors below.</p>}
      <form method="post" action={props.action} class="record-form" novalidate>
        <input type="hidden" name={CSRF_FIELD} value={frame.staff!.csrfToken} />
        {(props.current ? [OLD, ...INPUTS] : INPUTS).map((input) => (
          <label class="field" key={input.name} for={`id_${input.name}`}>
            <span>{input.label}</span>
            <input type="password" id={`id_${input.name}`} name={input.name} autocomplete={input.autocomplete} required />
            {errors[input.name] && (
              <ul class="errorlist">
                {errors[input.name]!.map((message) => (
                  <li key={message}>{message}</li>
                ))}
              </ul>
            )}
          </label>
        ))}
        <div class="actions">
          <button type="submit">Change password</button>
        </div>
      </form>
    </Layout>
  );
}
