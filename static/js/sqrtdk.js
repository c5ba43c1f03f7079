// "Why √d_k?": seed 000's experiment, drawn when the panel is first opened.
// Scores q·k of random unit-variance vectors spread like √d; scaling by 1/√d keeps them
// near 1, so the softmax does not saturate.

import { getSqrtDkExperiment } from './api.js';
import * as plot from './plot.js';

const $ = (id) => document.getElementById(id);

async function draw() {
  const panel = $('sqrt-dk');
  try {
    const e = await getSqrtDkExperiment();
    await plot.lines($('sqrt-dk-std'), [
      { x: e.dims, y: e.std_raw, name: 'std of Q·Kᵀ' },
      { x: e.dims, y: e.std_scaled, name: 'std of Q·Kᵀ / √d' },
      { x: e.dims, y: e.expected_std_raw, name: '√d (theory)', dash: 'dot' },
    ], 'd (width of q and k)', 'standard deviation of the scores', 'log');
    await plot.lines($('sqrt-dk-max'), [
      { x: e.dims, y: e.max_weight_raw, name: 'largest α, unscaled' },
      { x: e.dims, y: e.max_weight_scaled, name: 'largest α, scaled by 1/√d' },
      { x: e.dims, y: e.dims.map(() => e.uniform_weight), name: `uniform (1/${e.n})`, dash: 'dot' },
    ], 'd (width of q and k)', 'mean of each row’s largest softmax weight');
    panel.dataset.drawn = 'true';
  } catch (err) {
    const box = $('sqrt-dk-error');
    box.hidden = false;
    box.textContent = `The experiment could not be loaded: ${err.message}`;
  }
}

export function initSqrtDk() {
  const panel = $('sqrt-dk');
  if (!panel) return;
  let started = false;
  panel.addEventListener('toggle', () => {
    if (panel.open && !started) {
      started = true;
      draw();
    }
  });
}
