/**
 * A field's input in a record form, from its declaration: the browsable API's forms (sent as JSON
 * by its script) and the admin's (posted as a form) render the same ones. `errors`: the messages
 * a refused write gave the field, shown beside it.
 */
import type { Field } from '../../../core/fields.js';
import type { Serializer } from '../../declare/serializer.js';
import { boundsOf, kindInput, textRulesOf } from './inputs.js';

/** A field's messages from a refused write, beside it. */
export function Errors(props: { messages: readonly string[] | undefined }) {
  if (!props.messages || props.messages.length === 0) return null;
  return (
    <ul class="errorlist">
      {props.messages.map((message) => (
        <li key={message}>{message}</li>
      ))}
    </ul>
  );
}

/** A stored time as a `datetime-local` input's value: its UTC date and time, without the offset. */
function utcLocal(value: unknown): string {
  const time = typeof value === 'string' ? new Date(value) : undefined;
  return time && !Number.isNaN(time.getTime()) ? time.toISOString().slice(0, 23) : '';
}

/** The rendered file object's parts the form shows; its link only when it is a web address (a link rendered outside a request has none). */
function currentFile(value: unknown): { name: string; size: number; url?: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { name, size, url } = value as Record<string, unknown>;
  if (typeof name !== 'string') return undefined;
  return { name, size: Number(size), ...(typeof url === 'string' && /^https?:\/\//i.test(url) && { url }) };
}

/** The name of a file field's clear box (Django's): a form posted without script sends it ticked, and the admin clears the field. */
export const clearName = (name: string): string => `${name}-clear`;

/**
 * A file or image field: the file now stored (its link, an image shown small) and a file input; a
 * nullable one that holds a file, a box to clear it. The browsable page's script sends the form as
 * multipart/form-data (a chosen file uploaded; none chosen, the file kept).
 */
function FileInput(props: { name: string; field: Field; value: unknown; creating: boolean; errors?: readonly string[] }) {
  const { name, field } = props;
  const current = currentFile(props.value);
  // What the browser's picker offers; the server judges the bytes whatever is picked.
  const accept = field.kind === 'image' ? 'image/*' : field.file?.accept?.join(',');
  return (
    <div class="field file-field">
      <label for={`field-${name}`}>
        <span>
          {name}
          {field.required === 'always' || (field.required === 'create' && props.creating) ? ' *' : ''}
        </span>
      </label>
      {current && (
        <span class="current-file">
          Currently: {current.url ? <a href={current.url}>{current.name}</a> : current.name} ({current.size} bytes)
          {field.kind === 'image' && current.url && <img class="file-preview" src={current.url} alt={current.name} />}
        </span>
      )}
      <input type="file" id={`field-${name}`} name={name} data-kind={field.kind} accept={accept} />
      {current && field.nullable && (
        <label class="clear-file">
          <input type="checkbox" name={clearName(name)} data-clear={name} /> clear
        </label>
      )}
      <Errors messages={props.errors} />
    </div>
  );
}

/**
 * `utcPicker`: a timestamp as the browser's date-and-time picker, in UTC (the admin's forms, which
 * add the offset before the API reads it); else a text box of ISO 8601 (the browsable API's).
 */
export function FieldInput(props: { name: string; field: Field; value: unknown; hidden: boolean; creating: boolean; errors?: readonly string[]; utcPicker?: boolean }) {
  const { name, field, value } = props;
  if (field.file) return <FileInput name={name} field={field} value={value} creating={props.creating} errors={props.errors} />;
  const common = { id: `field-${name}`, name, 'data-kind': field.kind };
  let input;
  if (field.kind === 'timestamp' && props.utcPicker) {
    input = <input type="datetime-local" step="0.001" {...common} value={utcLocal(value)} aria-describedby={`field-${name}-zone`} />;
  } else if (field.kind === 'boolean') {
    input = <input type="checkbox" {...common} checked={value === undefined ? field.default?.({ userId: null }) === true : value === true} />;
  } else if (field.kind === 'text') {
    input = (
      <textarea {...common} minlength={field.limits?.minLength} rows={4}>
        {value === undefined || value === null ? '' : String(value)}
      </textarea>
    );
  } else {
    // A JSON value's input writes it itself (String() of an array recurses, as deep as it nests).
    const shown = props.hidden || value === undefined || value === null || field.valueType === 'json' ? '' : String(value);
    const own = kindInput(field, common, value, shown);
    if (own) input = own;
    else if (field.kind === 'password') input = <input type="password" {...common} autocomplete="new-password" />;
    else if (field.valueType === 'integer') input = <input type="number" {...common} {...boundsOf(field)} value={shown} />;
    else if (field.kind === 'email') input = <input type="email" {...common} {...textRulesOf(field)} value={shown} />;
    else input = <input type="text" {...common} {...textRulesOf(field)} value={shown} placeholder={field.kind === 'timestamp' ? '2026-01-31T12:00:00Z' : undefined} />;
  }
  return (
    <label class="field" for={`field-${name}`}>
      <span>
        {name}
        {field.required === 'always' || (field.required === 'create' && props.creating) ? ' *' : ''}
      </span>
      {input}
      {field.kind === 'timestamp' && props.utcPicker && (
        <small id={`field-${name}-zone`} class="help">
          UTC
        </small>
      )}
      <Errors messages={props.errors} />
    </label>
  );
}

/** The input of each way a relation is written. */
const RELATION_INPUTS = {
  slug: { 'data-kind': 'string' },
  ids: { 'data-kind': 'ids', placeholder: 'ids, comma-separated: 1, 2' },
  slugs: { 'data-kind': 'slugs', placeholder: 'comma-separated' },
} as const;

/**
 * A writable relation: a many-to-many's ids (sent as a list of numbers) or slugs (a list of strings), comma-separated, or a slug as text.
 * `lookup`: the admin's lookup page for it, which the admin's script searches as it is typed in.
 */
export function RelationInput(props: { name: string; value: unknown; writes: keyof typeof RELATION_INPUTS; errors?: readonly string[]; lookup?: string }) {
  const shown = Array.isArray(props.value) ? props.value.join(', ') : typeof props.value === 'string' ? props.value : '';
  const kind = RELATION_INPUTS[props.writes];
  return (
    <label class="field" for={`field-${props.name}`}>
      <span>{props.name}</span>
      <input type="text" id={`field-${props.name}`} name={props.name} value={shown} {...kind} data-lookup={props.lookup} data-many={props.writes === 'slug' ? undefined : 'true'} autocomplete={props.lookup ? 'off' : undefined} />
      <Errors messages={props.errors} />
    </label>
  );
}

/** How a writable relation is written: a slug, slugs, or ids. */
export const relationWrites = (serializer: Serializer, name: string): keyof typeof RELATION_INPUTS =>
  serializer.relations[name]!.slug ? 'slug' : serializer.relations[name]!.slugs ? 'slugs' : 'ids';
