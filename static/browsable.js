// The browsable API's behaviour: forms send JSON (so the API's 415 rule holds
// for browsers too), or multipart/form-data where they hold a file field, with
// the session's CSRF token when there is one.
'use strict';

const csrfToken = document.querySelector('meta[name="csrf-token"]')?.content;

async function send(method, url, body) {
  const headers = { Accept: 'application/json' };
  // A FormData's Content-Type (with its boundary) is the browser's to set.
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['Content-Type'] = 'application/json';
  if (csrfToken) headers['X-CSRF-Token'] = csrfToken;
  const response = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined || form ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { response, text };
}

function show({ response, text }) {
  const result = document.getElementById('result');
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // not JSON: show as it came
  }
  result.className = response.ok ? 'ok' : 'error';
  result.textContent = `HTTP ${response.status} ${response.statusText}\n${pretty}`;
}

/** Kinds sent as the input's text, and left out when it is empty (an empty one is no value of theirs). */
const OMITTED_WHEN_EMPTY = new Set(['password', 'timestamp', 'choice', 'date', 'time', 'duration', 'decimal', 'bigint', 'uuid']);

/** A JSON field's text → its value; text that is no JSON is sent as a string, which the field judges. */
function jsonOrText(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** File inputs: sent only as multipart parts (uploadBody), never in the JSON body. */
const FILE_KINDS = new Set(['file', 'image']);

/** A form's inputs → the JSON body, typed by each field's kind; empty optional numbers and passwords are left out. */
function formBody(form) {
  const body = {};
  for (const element of form.elements) {
    if (!element.name || !element.dataset.kind) continue;
    const kind = element.dataset.kind;
    if (FILE_KINDS.has(kind)) continue;
    if (kind === 'boolean') body[element.name] = element.checked;
    else if (kind === 'integer' || kind === 'foreign_key' || kind === 'float') {
      if (element.value !== '') body[element.name] = Number(element.value);
    } else if (kind === 'json') {
      if (element.value.trim() !== '') body[element.name] = jsonOrText(element.value);
    } else if (kind === 'ids') {
      // Each id a number; what is no number becomes null, which the API refuses by field.
      body[element.name] = element.value.split(',').map((id) => id.trim()).filter(Boolean).map(Number);
    } else if (kind === 'slugs') {
      body[element.name] = element.value.split(',').map((slug) => slug.trim()).filter(Boolean);
    } else if (OMITTED_WHEN_EMPTY.has(kind)) {
      if (element.value !== '') body[element.name] = element.value;
    } else body[element.name] = element.value;
  }
  return body;
}

/** A text part of a multipart body, as the API reads a form's fields: a list as its key repeated, a JSON value as its text, null as empty. */
function appendText(parts, name, value) {
  if (Array.isArray(value)) {
    if (value.length === 0) parts.append(name, '');
    for (const one of value) parts.append(name, String(one));
  } else if (value === null) parts.append(name, '');
  else if (typeof value === 'object') parts.append(name, JSON.stringify(value));
  else parts.append(name, String(value));
}

/**
 * A form with file inputs → a multipart body: the same values as formBody's as text parts, each
 * chosen file as a file part, an empty part for a file the form clears; a file input left empty
 * sends nothing (the stored file is kept).
 */
function uploadBody(form) {
  const parts = new FormData();
  for (const [name, value] of Object.entries(formBody(form))) appendText(parts, name, value);
  for (const element of form.elements) {
    if (FILE_KINDS.has(element.dataset.kind) && element.files.length > 0) parts.append(element.name, element.files[0]);
    else if (element.dataset.clear && element.checked) parts.append(element.dataset.clear, '');
  }
  return parts;
}

const parentPath = (path) => path.replace(/[^/]+\/$/, '');

for (const form of document.querySelectorAll('form.record-form')) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const method = event.submitter?.dataset.method ?? 'POST';
    const body = form.enctype === 'multipart/form-data' ? uploadBody(form) : formBody(form);
    const outcome = await send(method, form.dataset.url, body);
    if (!outcome.response.ok) return show(outcome);
    if (method === 'POST') window.location.assign(outcome.response.headers.get('Location') ?? window.location.href);
    else window.location.reload();
  });
}

document.getElementById('delete')?.addEventListener('click', async (event) => {
  const url = event.currentTarget.dataset.url;
  if (!window.confirm('Delete this record?')) return;
  const outcome = await send('DELETE', url);
  if (!outcome.response.ok) return show(outcome);
  window.location.assign(parentPath(url));
});

document.getElementById('login')?.addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const outcome = await send('POST', form.dataset.url, { username: form.username.value, password: form.password.value });
  if (!outcome.response.ok) return show(outcome);
  window.location.reload();
});

document.getElementById('logout')?.addEventListener('click', async (event) => {
  const outcome = await send('POST', event.currentTarget.dataset.url);
  if (!outcome.response.ok) return show(outcome);
  window.location.reload();
});

document.getElementById('list-controls')?.addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const query = new URLSearchParams(window.location.search);
  for (const name of [...query.keys()]) if (name !== 'page_size') query.delete(name);
  for (const name of ['search', 'ordering']) {
    if (form.elements[name]?.value) query.set(name, form.elements[name].value);
  }
  for (const filter of form.querySelectorAll('.filter')) {
    const value = filter.querySelector('.value').value;
    const lookup = filter.querySelector('.lookup').value;
    if (value !== '') query.set(lookup === 'exact' ? filter.dataset.field : `${filter.dataset.field}__${lookup}`, value);
  }
  const search = query.toString();
  window.location.assign(window.location.pathname + (search ? `?${search}` : ''));
});

// A live list (a collection declared `live`): the list shown is read again whenever its stream
// says a record changed, a burst of changes once.
const live = document.getElementById('live');
if (live && 'EventSource' in window) {
  const body = document.getElementById('response-body');
  let pending;
  const reread = async () => {
    const { response, text } = await send('GET', location.href);
    if (response.ok) body.textContent = JSON.stringify(JSON.parse(text), null, 2);
  };
  const source = new EventSource(live.dataset.url);
  for (const kind of ['created', 'updated', 'deleted', 'reset']) {
    source.addEventListener(kind, () => {
      clearTimeout(pending);
      pending = setTimeout(reread, 200);
    });
  }
}
