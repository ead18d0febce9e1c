/**
 * The frame of every admin page: Django's header (site name, the user's name, a log-out form),
 * breadcrumbs and messages. Preact escapes every value it renders, so record data stays text.
 */
import type { ComponentChildren } from 'preact';
import { CSRF_FIELD } from '../access.js';
import { PageHead } from '../../render/browsable/head.js';

export interface Crumb {
  readonly label: string;
  readonly href?: string;
}

export interface Frame {
  /** The admin's root path, ending in `/`. */
  readonly root: string;
  readonly title: string;
  readonly crumbs?: readonly Crumb[];
  /** The logged-in staff user and the session's CSRF token (absent on the login pages). */
  readonly staff?: { readonly username: string; readonly csrfToken: string };
  readonly message?: string;
  readonly error?: string;
}

export function Layout(props: { frame: Frame; children: ComponentChildren }) {
  const { frame } = props;
  return (
    <html lang="en">
      <PageHead title={`${frame.title} | Restfold administration`} script="admin.js" />
      <body class="admin">
        <header>
          <a class="brand" href={frame.root}>
            Restfold administration
          </a>
          {frame.staff && (
            <form class="account" method="post" action={`${frame.root}logout/`}>
              <span>
                Welcome, <strong>{frame.staff.username}</strong>.
              </span>
              <input type="hidden" name={CSRF_FIELD} value={frame.staff.csrfToken} />
              <button type="submit" class="secondary">
                Log out
              </button>
            </form>
          )}
        </header>
        <main>
          {frame.crumbs && (
            <nav class="breadcrumbs" aria-label="Breadcrumbs">
              <a href={frame.root}>Home</a>
              {frame.crumbs.map((crumb) => (
                <span key={crumb.label}>
                  {' › '}
                  {crumb.href ? <a href={crumb.href}>{crumb.label}</a> : crumb.label}
                </span>
              ))}
            </nav>
          )}
          {frame.message && (
            <p class="message success" role="status">
              {frame.message}
            </p>
          )}
          {frame.error && (
            <p class="message error" role="alert">
              {frame.error}
            </p>
          )}
          <h1>{frame.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}
