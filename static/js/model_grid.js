// The layer × head grid of the model page: one small canvas per head, drawn from the
// overview's pooled α (no Plotly: 72 canvases draw in a few milliseconds).

import { el } from './text.js';

// Viridis at 9 stops (matplotlib), interpolated linearly.
const VIRIDIS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37]];

/** [r, g, b] for t in [0, 1]. */
function viridis(t) {
  const x = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(x), VIRIDIS.length - 2);
  const f = x - i;
  return VIRIDIS[i].map((c, k) => Math.round(c + f * (VIRIDIS[i + 1][k] - c)));
}

/** Paint an m × m block of `data` (starting at `offset`) into `canvas`, scaled to its max. */
function paint(canvas, data, offset, m) {
  canvas.width = m;
  canvas.height = m;
  let max = 0;
  for (let i = 0; i < m * m; i += 1) max = Math.max(max, data[offset + i]);
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(m, m);
  for (let i = 0; i < m * m; i += 1) {
    const [r, g, b] = viridis(max > 0 ? data[offset + i] / max : 0);
    img.data.set([r, g, b, 255], 4 * i);
  }
  ctx.putImageData(img, 0, 0);
}

/**
 * Fill `container` with layers × heads buttons, each holding a thumbnail canvas.
 * thumbs: decoded [layers, heads, m, m]; describe(layer, head) -> accessible text.
 */
export function drawGrid(container, thumbs, describe, onPick) {
  const [layers, heads, m] = thumbs.shape;
  container.replaceChildren();
  container.style.setProperty('--heads', String(heads));
  container.append(el('span', 'layer \\ head', 'col-label'));
  for (let h = 0; h < heads; h += 1) container.append(el('span', String(h), 'col-label'));
  for (let l = 0; l < layers; l += 1) {
    container.append(el('span', String(l), 'row-label'));
    for (let h = 0; h < heads; h += 1) {
      const button = el('button', null, 'cell');
      button.type = 'button';
      button.dataset.layer = String(l);
      button.dataset.head = String(h);
      button.setAttribute('aria-pressed', 'false');
      button.setAttribute('aria-label', describe(l, h));
      button.title = describe(l, h);
      const canvas = document.createElement('canvas');
      paint(canvas, thumbs.data, (l * heads + h) * m * m, m);
      button.append(canvas);
      button.addEventListener('click', () => onPick(l, h));
      container.append(button);
    }
  }
  container.dataset.cells = String(layers * heads);
}

export function markCell(container, layer, head) {
  for (const b of container.querySelectorAll('button.cell')) {
    const on = Number(b.dataset.layer) === layer && Number(b.dataset.head) === head;
    b.setAttribute('aria-pressed', on ? 'true' : 'false');
  }
}
