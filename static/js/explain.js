// "How did this cell come about?": a few lines of plain text for the cell inspector.
// Each explanation recomputes the cell from the steps it came from and is only shown when
// it reproduces the value, so a mechanism with a different formula falls back to the value.

import { exact, short, slice2d } from './arrays.js';
import { isMaskedCell, view } from './result.js';
import { numbered } from './text.js';

const close = (a, b) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(a), Math.abs(b));

function sameGrid(a, b) {
  return a && b && a.shape.join() === b.shape.join() && a.axes.join() === b.axes.join();
}

/** α_ij = exp(s_ij − m_i) / Σ_j exp(s_ij − m_i), from the scores that went in. */
function softmaxLines(model, prev, step, h, i, j, value) {
  const v = slice2d(prev.tensor, h);
  const row = Array.from({ length: v.cols }, (_, t) => v.get(i, t));
  const off = row.map((x, t) => isMaskedCell(model, prev, i, t, x) || !Number.isFinite(x));
  const live = row.filter((_, t) => !off[t]);
  if (!live.length) return null;
  const m = Math.max(...live);
  const e = row.map((x, t) => (off[t] ? 0 : Math.exp(x - m)));
  const sum = e.reduce((a, b) => a + b, 0);
  if (!close(e[j] / sum, value)) return null;
  return [
    `α_ij = exp(s_ij − m_i) / Σ_j exp(s_ij − m_i), with s from “${prev.title}”.`,
    `s_ij = ${off[j] ? `${short(row[j])} (masked)` : exact(row[j])}; row max m_i = ${exact(m)}.`,
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

const terms = (xs, ws) => xs.slice(0, 6).map((x, t) => `${short(x)}·${short(ws[t])}`).join(' + ')
  + (xs.length > 6 ? ' + …' : '');

function dot(xs, ws) {
  return xs.reduce((sum, x, t) => sum + x * ws[t], 0);
}

/**
 * Q_ij from the weights the run actually used, in the two ways a mechanism can project:
 * one wide weight (Q = X·W_q, head h is columns h·d_k … of W_q, plus b_q when given), or one
 * shared small weight applied to head h's slice of X's row (X_i[h·head_dim …]·W_q). A line is
 * shown only if it recomputes the value; otherwise the cell is described without a formula.
 */
function projectionLines(model, step, h, i, j, value) {
  const letter = step.id.toUpperCase();
  const inputId = step.id === 'q' ? 'x' : 'x_kv';
  const input = model.steps.find((s) => s.id === inputId) || model.steps.find((s) => s.id === 'x');
  const w = model.weights[`W_${step.id}`];
  const generic = [`${letter}_ij: feature ${j + 1} of row ${i + 1}'s projection (see the step's formula).`];
  if (!input || !w || w.shape.length !== 2) return generic;
  const x = slice2d(input.tensor, 0);
  if (i >= x.rows) return generic;
  const xs = Array.from({ length: x.cols }, (_, t) => x.get(i, t));
  const [wRows, wCols] = w.shape;
  const column = (c) => Array.from({ length: wRows }, (_, t) => w.data[t * wCols + c]);
  const name = input.id === 'x' ? 'X' : 'X_kv';
  const width = step.shape[step.shape.length - 1];
  // one wide weight: column h·width + j of W (and its bias)
  const c = h * width + j;
  if (wRows === x.cols && c < wCols) {
    const ws = column(c);
    const b = model.weights[`b_${step.id}`];
    const bias = b && b.data.length === wCols ? b.data[c] : 0;
    const sum = dot(xs, ws) + bias;
    if (close(sum, value)) {
      return [`${letter}_ij = row ${i + 1} of ${name} · column ${c + 1} of W_${step.id}`
        + `${bias ? ` + b_${step.id}[${c + 1}]` : ''} = ${terms(xs, ws)}`
        + `${bias ? ` + ${short(bias)}` : ''} = ${exact(sum)}.`];
    }
  }
  // one shared weight on head h's slice of the row
  const from = h * wRows;
  if (from + wRows <= x.cols && j < wCols) {
    const part = xs.slice(from, from + wRows);
    const ws = column(j);
    const sum = dot(part, ws);
    if (close(sum, value)) {
      return [`${letter}_ij = features ${from + 1}–${from + wRows} of row ${i + 1} of ${name} `
        + `(head ${h + 1}'s slice) · column ${j + 1} of W_${step.id} = ${terms(part, ws)} = ${exact(sum)}.`];
    }
  }
  return generic;
}

function maskedLines(masked, prev, value) {
  if (masked) {
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
    `value = ${exact(value)}${v.masked(i, j) ? ' (masked)' : ''}`];
  const prev = model.steps[index - 1];
  const byId = (id) => model.steps.find((s) => s.id === id);
  let more = null;
  if (sameGrid(prev, step) && step.axes.includes('key') && step.range.min >= 0) {
    more = softmaxLines(model, prev, step, h, i, j, value);
  }
  if (!more && step.id === 'scores' && byId('q') && byId('k')) more = dotLines(byId('q'), byId('k'), h, i, j, value);
  if (!more && ['q', 'k', 'v'].includes(step.id)) more = projectionLines(model, step, h, i, j, value);
  if (!more && step.id === 'masked') more = maskedLines(v.masked(i, j), prev, value);
  if (!more && step.id === 'scaled' && sameGrid(prev, step)) {
    const before = view(model, prev, h).slice.get(i, j);
    if (before !== 0) more = [`= ${exact(before)} (“${prev.title}”) × s, s = ${exact(value / before)}`];
  }
  if (step.note) head.push(step.note);
  return head.concat(more || []);
}
