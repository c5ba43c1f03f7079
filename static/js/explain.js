// "How did this cell come about?": a few lines of plain text for the cell inspector.
// Each explanation recomputes the cell from the steps it came from and is only shown when
// it reproduces the value, so a mechanism with a different formula falls back to the value.

import { exact, short, slice2d } from './arrays.js';
import { isMasked, view } from './result.js';
import { numbered } from './text.js';

const close = (a, b) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(a), Math.abs(b));

function sameGrid(a, b) {
  return a && b && a.shape.join() === b.shape.join() && a.axes.join() === b.axes.join();
}

/** α_ij = exp(s_ij − m_i) / Σ_j exp(s_ij − m_i), from the scores that went in. */
function softmaxLines(prev, step, h, i, j, value) {
  const v = slice2d(prev.tensor, h);
  const row = Array.from({ length: v.cols }, (_, t) => v.get(i, t));
  const live = row.filter((x) => !isMasked(x));
  if (!live.length) return null;
  const m = Math.max(...live);
  const e = row.map((x) => (isMasked(x) ? 0 : Math.exp(x - m)));
  const sum = e.reduce((a, b) => a + b, 0);
  if (!close(e[j] / sum, value)) return null;
  return [
    `α_ij = exp(s_ij − m_i) / Σ_j exp(s_ij − m_i), with s from “${prev.title}”.`,
    `s_ij = ${isMasked(row[j]) ? `${short(row[j])} (masked)` : exact(row[j])}; row max m_i = ${exact(m)}.`,
    `exp(s_ij − m_i) = ${exact(e[j])}; the row's sum Σ_j exp(s_ij − m_i) = ${exact(sum)}.`,
    `α_ij = ${exact(e[j])} / ${exact(sum)} = ${exact(e[j] / sum)}.`,
  ];
}

/** s_ij = q_i · k_j, from the Q and K steps of the same head. */
function dotLines(q, k, h, i, j, value) {
  const vq = slice2d(q.tensor, h);
  const vk = slice2d(k.tensor, h);
  if (vq.cols !== vk.cols || i >= vq.rows || j >= vk.rows) return null;
  let sum = 0;
  const terms = [];
  for (let t = 0; t < vq.cols; t += 1) {
    sum += vq.get(i, t) * vk.get(j, t);
    if (t < 6) terms.push(`${short(vq.get(i, t))}·${short(vk.get(j, t))}`);
  }
  if (!close(sum, value)) return null;
  return [`s_ij = q_i · k_j = ${terms.join(' + ')}${vq.cols > 6 ? ' + …' : ''} = ${exact(sum)}.`];
}

/** Q_ij = Σ_t X_it · W[t, col]: row i of the input against one column of the weight. */
function projectionLines(model, step, h, i, j, value) {
  const letter = step.id.toUpperCase();
  const input = model.steps.find((s) => s.id === (step.id === 'q' ? 'x' : 'x_kv'))
    || model.steps.find((s) => s.id === 'x');
  if (!input) return null;
  const x = slice2d(input.tensor, 0);
  if (i >= x.rows) return null;
  const col = h * step.shape[step.shape.length - 1] + j;
  const xs = Array.from({ length: x.cols }, (_, t) => x.get(i, t));
  const lines = [`${letter}_ij = Σ_t X_it · W_${step.id}[t, ${col + 1}]: row ${i + 1} of `
    + `“${input.title}” against column ${col + 1} of W_${step.id}.`,
  `row ${i + 1} of X = [${xs.slice(0, 8).map(short).join(', ')}${xs.length > 8 ? ', …' : ''}]`];
  const w = model.weights[`W_${step.id}`];
  if (w && w.shape.length === 2 && w.shape[0] === x.cols && col < w.shape[1]) {
    let sum = 0;
    const terms = [];
    xs.forEach((xv, t) => {
      const wv = w.data[t * w.shape[1] + col];
      sum += xv * wv;
      if (t < 6) terms.push(`${short(xv)}·${short(wv)}`);
    });
    if (close(sum, value)) lines.push(`= ${terms.join(' + ')}${xs.length > 6 ? ' + …' : ''} = ${exact(sum)}`);
  }
  return lines;
}

function maskedLines(prev, h, i, j, value) {
  if (isMasked(value)) {
    return [`Masked: this query may not attend to this key, so the score is set to ${short(value)} `
      + 'and its weight after the softmax is 0.'];
  }
  if (prev) return [`Not masked: the same as “${prev.title}”.`];
  return null;
}

/** Lines of text explaining cell (i, j) of step `index`, head h. */
export function explain(model, index, h, i, j) {
  const step = model.steps[index];
  const v = view(model, step, h);
  if (i < 0 || j < 0 || i >= v.slice.rows || j >= v.slice.cols) return [];
  const value = v.slice.get(i, j);
  const where = [v.rowAxis ? `${v.rowAxis} ${numbered(v.rowLabels[i], i)}` : null,
    `${v.colAxis} ${numbered(v.colLabels[j], j)}`, v.hasHead ? `head ${h + 1}` : null];
  const head = [`${step.title}: ${where.filter(Boolean).join(' · ')}`,
    `value = ${exact(value)}${isMasked(value) ? ' (masked)' : ''}`];
  const prev = model.steps[index - 1];
  const byId = (id) => model.steps.find((s) => s.id === id);
  let more = null;
  if (sameGrid(prev, step) && step.axes.includes('key') && step.range.min >= 0) {
    more = softmaxLines(prev, step, h, i, j, value);
  }
  if (!more && step.id === 'scores' && byId('q') && byId('k')) more = dotLines(byId('q'), byId('k'), h, i, j, value);
  if (!more && ['q', 'k', 'v'].includes(step.id)) more = projectionLines(model, step, h, i, j, value);
  if (!more && step.id === 'masked') more = maskedLines(prev, h, i, j, value);
  if (!more && step.id === 'scaled' && sameGrid(prev, step)) {
    const before = view(model, prev, h).slice.get(i, j);
    if (before !== 0) more = [`= ${exact(before)} (“${prev.title}”) × s, s = ${exact(value / before)}`];
  }
  if (step.note) head.push(step.note);
  return head.concat(more || []);
}
