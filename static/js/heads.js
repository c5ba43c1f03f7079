// The head grid: one small α heatmap per head; "Focus" (or a click on it) shows that head
// in the stepper.

import { maxOf, slice2d } from './arrays.js';
import * as plot from './plot.js';
import { el } from './text.js';

export function drawHeads(container, model, current, onFocus) {
  container.replaceChildren();
  const range = { min: 0, max: maxOf(model.attention.data) };
  const jobs = [];
  for (let h = 0; h < model.heads; h += 1) {
    const fig = el('figure', null, 'head');
    const thumb = el('div', null, 'thumb');
    thumb.setAttribute('role', 'img');
    thumb.setAttribute('aria-label', `α of head ${h + 1}`);
    thumb.addEventListener('click', () => onFocus(h));
    const button = el('button', `Focus head ${h + 1}`);
    button.type = 'button';
    button.dataset.head = String(h);
    button.setAttribute('aria-pressed', h === current ? 'true' : 'false');
    button.addEventListener('click', () => onFocus(h));
    fig.append(thumb, button);
    container.append(fig);
    jobs.push(() => plot.thumbnail(thumb, slice2d(model.attention, h).rowViews, range));
  }
  // after the main heatmap: one thumbnail per frame keeps the page responsive
  const next = () => {
    const job = jobs.shift();
    if (job && !container.contains(fig0)) return; // a newer result replaced this grid
    if (job) job().then(() => window.requestAnimationFrame(next));
    else container.dataset.drawn = String(model.heads);
  };
  const fig0 = container.firstElementChild;
  container.dataset.drawn = '0';
  window.requestAnimationFrame(next);
}

export function markHead(container, current) {
  for (const b of container.querySelectorAll('button[data-head]')) {
    b.setAttribute('aria-pressed', Number(b.dataset.head) === current ? 'true' : 'false');
    b.closest('figure').classList.toggle('current', Number(b.dataset.head) === current);
  }
}
