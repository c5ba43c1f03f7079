// An API result decoded once: every step's numbers as a typed array, its finite range,
// and which tokens go on which axis. Nothing here knows a mechanism: the step's `axes`
// say what its rows and columns are.

import { decode, slice2d } from './arrays.js';

/** Steps whose cells the mask removes: a cell there is masked only where mask[i][j] == 0. */
const MASKED_STEPS = new Set(['masked', 'softmax', 'weights']);

/**
 * Is cell (i, j) of `step` masked? Only the explicit mask the API sends says so (1 = may
 * attend), in the steps it applies to; −∞ in the `masked` step is a masked cell too. A value
 * is never guessed from (an input of −1e20 on step x is a number, not a gap).
 */
export function isMaskedCell(model, step, i, j, value) {
  if (!MASKED_STEPS.has(step.id) || step.axes.indexOf('key') !== step.axes.length - 1) return false;
  const row = model.mask && model.mask[i];
  if (row && row[j] === 0) return true;
  return step.id === 'masked' && value === -Infinity;
}

/** Finite range of the cells that are drawn (masked cells and non-finite numbers left out). */
function rangeOf(tensor, masked) {
  const { data, shape } = tensor;
  const cols = shape[shape.length - 1] || 1;
  const rows = shape.length >= 2 ? shape[shape.length - 2] : 1;
  let min = Infinity;
  let max = -Infinity;
  for (let n = 0; n < data.length; n += 1) {
    const v = data[n];
    if (Number.isFinite(v) && !masked(Math.floor(n / cols) % rows, n % cols, v)) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  return min === Infinity ? { min: 0, max: 0 } : { min, max };
}

/** The mask as rows of 0/1 numbers (null when the run had none). */
function maskOf(mask) {
  if (!mask) return null;
  const t = decode(mask);
  if (t.shape.length !== 2) return null;
  return Array.from({ length: t.shape[0] }, (_, i) =>
    Array.from(t.data.subarray(i * t.shape[1], (i + 1) * t.shape[1]), (v) => (v ? 1 : 0)));
}

/** The response of POST /api/v1/attention (typed or plain lists) as a model for drawing. */
export function toModel(result) {
  const attention = decode(result.attention);
  const model = {
    mechanism: result.mechanism,
    queryTokens: result.query_tokens,
    keyTokens: result.key_tokens,
    notes: result.notes || [],
    mask: maskOf(result.mask),
    steps: [],
    attention,
    heads: attention.shape[0] || 1,
    sizes: result.sizes || null, // shape symbol -> number, from the server (never derived here)
    weights: result.weights ? Object.fromEntries(Object.entries(result.weights)
      .filter(([, w]) => w).map(([name, w]) => [name, decode(w)])) : {},
  };
  model.steps = result.steps.map((s) => {
    const tensor = decode(s.data);
    const step = { id: s.id, title: s.title, formula: s.formula, axes: s.axes,
      note: s.note || null, shape: tensor.shape, tensor };
    step.range = rangeOf(tensor, (i, j, v) => isMaskedCell(model, step, i, j, v));
    return step;
  });
  return model;
}

/** Labels of one axis: tokens for query/key, 1..n for features and heads. */
export function axisLabels(model, axis, length) {
  const tokens = axis === 'query' ? model.queryTokens : axis === 'key' ? model.keyTokens : null;
  if (tokens && tokens.length === length) return tokens;
  return Array.from({ length }, (_, i) => String(i + 1));
}

/**
 * What one step looks like on screen for `head`: the 2-D slice, the axis names and labels
 * of its rows and columns (a 1-D step is one row), and masked(i, j) from the explicit mask.
 */
export function view(model, step, head) {
  const axes = step.axes.filter((a) => a !== 'head');
  const slice = slice2d(step.tensor, head);
  const rowAxis = axes.length >= 2 ? axes[0] : null;
  const colAxis = axes[axes.length - 1];
  return {
    slice,
    masked: (i, j) => isMaskedCell(model, step, i, j, slice.get(i, j)),
    hasHead: step.axes[0] === 'head',
    rowAxis,
    colAxis,
    rowLabels: rowAxis ? axisLabels(model, rowAxis, slice.rows) : [''],
    colLabels: axisLabels(model, colAxis, slice.cols),
  };
}
