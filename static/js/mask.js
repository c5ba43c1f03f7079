// The clickable 0/1 mask grid: rows are queries, columns keys, 1 = may attend.
// Each cell is a button (keyboard reachable, aria-pressed = may attend).

import { el, visible } from './text.js';

const MAX_GRID = 32;

export class MaskGrid {
  constructor(container, onChange) {
    this.container = container;
    this.onChange = onChange;
    this.matrix = null;
    this.queryTokens = [];
    this.keyTokens = [];
  }

  /** Set the grid's size from the tokens of the last result, keeping what fits. */
  resize(queryTokens, keyTokens) {
    this.queryTokens = queryTokens;
    this.keyTokens = keyTokens;
    const old = this.matrix;
    this.matrix = queryTokens.map((_, i) => keyTokens.map((__, j) =>
      (old && old[i] && old[i][j] !== undefined ? old[i][j] : 1)));
    this.render();
  }

  set(matrix) {
    this.matrix = matrix.map((row) => row.map((v) => (Number(v) ? 1 : 0)));
    this.render();
  }

  value() {
    return this.matrix;
  }

  render() {
    const box = this.container;
    box.replaceChildren();
    if (!this.matrix || !this.matrix.length) return;
    const rows = this.matrix.length;
    const cols = this.matrix[0].length;
    if (rows > MAX_GRID || cols > MAX_GRID) {
      box.append(el('p', `The grid is drawn up to ${MAX_GRID} × ${MAX_GRID} tokens; this input has `
        + `${rows} × ${cols}. Send a 0/1 matrix through the JSON API instead.`, 'hint'));
      return;
    }
    const table = el('table', null, 'mask-table');
    table.append(el('caption', 'Mask: rows are queries, columns keys; 1 = may attend. Click to toggle.'));
    const head = document.createElement('tr');
    head.append(el('th', ''));
    this.keyTokens.forEach((t, j) => head.append(el('th', `${j + 1}`, 'key-head')));
    table.append(head);
    this.matrix.forEach((row, i) => {
      const tr = document.createElement('tr');
      const th = el('th', `${i + 1} ${visible(this.queryTokens[i] ?? '')}`);
      th.scope = 'row';
      tr.append(th);
      row.forEach((v, j) => {
        const td = document.createElement('td');
        const b = el('button', v ? '1' : '0', v ? 'on' : 'off');
        b.type = 'button';
        b.setAttribute('aria-pressed', v ? 'true' : 'false');
        b.setAttribute('aria-label', `query ${i + 1} may attend to key ${j + 1} `
          + `(${visible(this.keyTokens[j] ?? '')})`);
        b.addEventListener('click', () => {
          const now = this.matrix[i][j] ? 0 : 1;
          this.matrix[i][j] = now;
          b.textContent = String(now);
          b.className = now ? 'on' : 'off';
          b.setAttribute('aria-pressed', now ? 'true' : 'false');
          this.onChange();
        });
        td.append(b);
        tr.append(td);
      });
      table.append(tr);
    });
    box.append(table);
  }
}
