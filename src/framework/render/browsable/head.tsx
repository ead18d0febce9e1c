/** The `<head>` the browsable API's pages and the admin's share: one style sheet and one deferred script of the service's own, no inline code (the CSP allows none). */
export function PageHead(props: { title: string; script: string; csrfToken?: string }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      {props.csrfToken && <meta name="csrf-token" content={props.csrfToken} />}
      <title>{props.title}</title>
      <link rel="stylesheet" href="/api/static/browsable.css" />
      <script src={`/api/static/${props.script}`} defer />
    </head>
  );
}
