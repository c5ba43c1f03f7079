// The values of the current step as a table: what a screen reader (or anyone who wants the
// numbers rather than colours) reads. Drawn only while its <details> is open.

import { short } from './arrays.js';
import { numbered, el } from './text.js';

const MAX_CELLS = 64 * 64;

export function renderTable(wrap, v, caption) {
  wrap.replaceChildren();
  if (v.slice.rows * v.slice.cols > MAX_CELLS) {
    wrap.append(el('p', `${v.slice.rows} × ${v.slice.cols} values are too many for a table; `
      + 'use “Step as CSV”.', 'hint'));
    return;
  }
  const table = el('table', null, 'values-table');
  table.id = 'values-table';
  table.append(el('caption', caption));
  const head = document.createElement('tr');
  head.append(el('th', v.rowAxis ? `${v.rowAxis} \\ ${v.colAxis}` : v.colAxis));
  v.colLabels.forEach((t, j) => {
    const th = el('th', numbered(t, j));
    th.scope = 'col';
    head.append(th);
  });
  const thead = document.createElement('thead');
  thead.append(head);
  const tbody = document.createElement('tbody');
  for (let i = 0; i < v.slice.rows; i += 1) {
    const tr = document.createElement('tr');
    const th = el('th', v.rowAxis ? numbered(v.rowLabels[i], i) : '');
    th.scope = 'row';
    tr.append(th);
    for (let j = 0; j < v.slice.cols; j += 1) {
      const value = v.slice.get(i, j);
      const td = el('td', short(value));
      td.dataset.value = String(value);
      tr.append(td);
    }
    tbody.append(tr);
  }
  table.append(thead, tbody);
  wrap.append(table);
}
