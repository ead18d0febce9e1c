/** Django's admin login and logged-out pages. */
import { CSRF_FIELD } from '../access.js';
import { Layout, type Frame } from './layout.js';

export function LoginPage(props: { frame: Frame; csrfToken: string; next: string; username: string; signedInAs?: string }) {
  return (
    <Layout frame={props.frame}>
      {props.signedInAs !== undefined && (
        <p class="message error">
          {`You are authenticated as ${props.signedInAs}, but are not authorized to access this page. Would you like to login to a different account?`}
        </p>
      )}
      <form method="post" class="login" action={`${props.frame.root}login/`}>
        <input type="hidden" name={CSRF_FIELD} value={props.csrfToken} />
        <input type="hidden" name="next" value={props.next} />
        <label class="field" for="id_username">
          <span>Username:</span>
          <input type="text" id="id_username" name="username" value={props.username} autocomplete="username" required autofocus />
        </label>
        <label class="field" for="id_password">
          <span>Password:</span>
          <input type="password" id="id_password" name="password" autocomplete="current-password" required />
        </label>
        <div class="actions">
          <button type="submit">Log in</button>
        </div>
      </form>
    </Layout>
  );
}

export function LoggedOutPage(props: { frame: Frame }) {
  return (
    <Layout frame={props.frame}>
      <p>Thanks for spending some quality time with the web site today.</p>
      <p>
        <a href={`${props.frame.root}login/`}>Log in again</a>
      </p>
    </Layout>
  );
}
