// The admin's related-field pickers: the pages work without this script (a related field is a
// text input of ids, with a link to its collection's lookup page); with it, typing in the field
// searches that lookup page and offers the records found, and the name beside a foreign key's box
// follows what is picked. It reads the page as HTML, so there is
// no second format to keep in step, and builds every element itself (no markup from data).
'use strict';

const DELAY_MS = 250;

/** The text being typed: the whole value, or a many-to-many's last comma-separated id. */
function typed(input) {
  return input.dataset.many ? input.value.split(',').pop().trim() : input.value.trim();
}

function pick(input, id) {
  if (input.dataset.many) {
    const kept = input.value.split(',').slice(0, -1).map((part) => part.trim()).filter(Boolean);
    input.value = [...kept, id].join(', ');
  } else {
    input.value = id;
  }
  input.focus();
}

/**
 * The name beside a foreign key's box (the page shows the record it holds, linked): kept true to
 * the box, so the record picked, or none while its id is being typed.
 */
function named(input, label) {
  if (input.dataset.many) return;
  const related = input.closest('.related');
  let name = related.querySelector('.related-name');
  if (!name) {
    name = document.createElement('strong');
    name.className = 'related-name';
    (related.querySelector('.related-lookup') ?? input).after(name);
  }
  name.textContent = label;
  name.hidden = label === '';
}

async function found(url, query) {
  const response = await fetch(`${url}?q=${encodeURIComponent(query)}`, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
  if (!response.ok) return [];
  const page = new DOMParser().parseFromString(await response.text(), 'text/html');
  return [...page.querySelectorAll('table.lookup tbody tr')].map((row) => ({ id: row.dataset.id, label: row.querySelector('.label')?.textContent ?? '' }));
}

function picker(input) {
  const list = document.createElement('ul');
  list.className = 'picker';
  list.id = `${input.id}-picker`;
  list.setAttribute('role', 'listbox');
  list.hidden = true;
  input.setAttribute('aria-controls', list.id);
  input.setAttribute('aria-autocomplete', 'list');
  input.closest('.related').append(list);
  let timer;
  let asked = 0;
  input.addEventListener('input', () => {
    named(input, '');
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const ask = ++asked;
      const records = typed(input) ? await found(input.dataset.lookup, typed(input)) : [];
      // An older answer arriving after a newer one is dropped.
      if (ask !== asked) return;
      list.replaceChildren(
        ...records.map((record) => {
          const item = document.createElement('li');
          const button = document.createElement('button');
          button.type = 'button';
          button.className = 'secondary';
          button.dataset.id = record.id;
          button.textContent = `${record.id} — ${record.label}`;
          button.addEventListener('click', () => {
            pick(input, record.id);
            named(input, record.label);
            list.hidden = true;
          });
          item.append(button);
          return item;
        }),
      );
      list.hidden = records.length === 0;
    }, DELAY_MS);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') list.hidden = true;
    if (event.key === 'ArrowDown' && !list.hidden) {
      event.preventDefault();
      list.querySelector('button')?.focus();
    }
  });
}

for (const input of document.querySelectorAll('input[data-lookup]')) picker(input);
