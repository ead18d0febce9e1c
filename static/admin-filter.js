// The filter box above the admin's multi-selects (a group's permissions, a user's groups and
// permissions): the form works without this script; with it, typing hides the choices that do not
// match. A hidden choice stays selected, so filtering never changes what is saved.
'use strict';

for (const box of document.querySelectorAll('input.choice-filter[data-filter-for]')) {
  const select = document.getElementById(box.dataset.filterFor);
  if (!select) continue;
  box.hidden = false;
  box.addEventListener('input', () => {
    const wanted = box.value.trim().toLowerCase();
    for (const option of select.options) option.hidden = wanted !== '' && !option.textContent.toLowerCase().includes(wanted);
  });
}
