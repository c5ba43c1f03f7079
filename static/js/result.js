// An API result decoded once: every step's numbers as a typed array, its finite range,
// and which tokens go on which axis. Nothing here knows a mechanism: the step's `axes`
// say what its rows and columns are.

import { decode, slice2d } from './arrays.js';

/** Masked cells are −∞ or the −1e20 fill: drawn as gaps and kept out of colour ranges. */
export function isMasked(v) {
  return !Number.isFinite(v) || v <= -1e19;
}

function rangeOf(data) {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < data.length; i += 1) {
    const v = data[i];
    if (!isMasked(v)) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  return min === Infinity ? { min: 0, max: 0 } : { min, max };
}

/** The response of POST /api/v1/attention (typed or plain lists) as a model for drawing. */
export function toModel(result) {
  const steps = result.steps.map((s) => {
    const tensor = decode(s.data);
    return { id: s.id, title: s.title, formula: s.formula, axes: s.axes, note: s.note || null,
      shape: tensor.shape, tensor, range: rangeOf(tensor.data) };
  });
  const attention = decode(result.attention);
  return {
    raw: result,
    mechanism: result.mechanism,
    queryTokens: result.query_tokens,
    keyTokens: result.key_tokens,
    notes: result.notes || [],
    steps,
    attention,
    output: decode(result.output),
    heads: attention.shape[0] || 1,
    sizes: result.sizes || inferSizes(steps, attention),
    weights: result.weights ? Object.fromEntries(Object.entries(result.weights)
      .filter(([, w]) => w).map(([name, w]) => [name, decode(w)])) : {},
  };
}

/** Labels of one axis: tokens for query/key, 1..n for features and heads. */
export function axisLabels(model, axis, length) {
  const tokens = axis === 'query' ? model.queryTokens : axis === 'key' ? model.keyTokens : null;
  if (tokens && tokens.length === length) return tokens;
  return Array.from({ length }, (_, i) => String(i + 1));
}

/**
 * What one step looks like on screen for `head`: the 2-D slice, and the axis names and
 * labels of its rows and columns (a 1-D step is one row).
 */
export function view(model, step, head) {
  const axes = step.axes.filter((a) => a !== 'head');
  const slice = slice2d(step.tensor, head);
  const rowAxis = axes.length >= 2 ? axes[0] : null;
  const colAxis = axes[axes.length - 1];
  return {
    slice,
    hasHead: step.axes[0] === 'head',
    rowAxis,
    colAxis,
    rowLabels: rowAxis ? axisLabels(model, rowAxis, slice.rows) : [''],
    colLabels: axisLabels(model, colAxis, slice.cols),
  };
}

/**
 * The sizes behind the weight symbols, read off the trace when the API does not send them:
 * d_model from X, d_kv from X_kv, d_k from Q, d_v from V, h from α; "h·d_k" is a product.
 * A symbol not found stays unknown (the form then shows the symbols only).
 */
function inferSizes(steps, attention) {
  const last = (id) => {
    const s = steps.find((x) => x.id === id);
    return s ? s.shape[s.shape.length - 1] : undefined;
  };
  const sizes = { h: attention.shape[0], n: attention.shape[2], d_model: last('x') };
  sizes.d_kv = last('x_kv') ?? sizes.d_model;
  if (last('q') !== undefined) sizes.d_k = last('q');
  if (last('v') !== undefined) sizes.d_v = last('v');
  const out = {};
  for (const [k, v] of Object.entries(sizes)) if (v !== undefined) out[k] = v;
  return new Proxy(out, {
    has: (t, key) => key in t || (typeof key === 'string' && key.includes('·')
      && key.split('·').every((part) => part in t)),
    get: (t, key) => (key in t ? t[key] : typeof key === 'string' && key.includes('·')
      ? key.split('·').reduce((p, part) => p * t[part], 1) : undefined),
  });
}
