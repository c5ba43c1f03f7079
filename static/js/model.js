// Entry point of the pretrained-model page (/model). It asks the server for the overview
// (every head's statistics and ≤ 64 × 64 thumbnails, the rollout) and for one head at a
// time: never all 72 full α matrices. The head's trace steps (X, Q, K, V, scores, α …) are
// fetched only while "Step by step" is open, and then shown by the shared Viewer.

import * as api from './api.js';
import { decode, short, slice2d } from './arrays.js';
import { drawGrid, markCell } from './model_grid.js';
import { drawHeadView } from './model_headview.js';
import * as plot from './plot.js';
import { toModel } from './result.js';
import { clip, el, escapePlotly, visible } from './text.js';
import { Viewer } from './viewer.js';

const $ = (id) => document.getElementById(id);
const STATS = [['entropy', 'entropy (nats)'], ['max_weight', 'largest α (mean)'],
  ['prev', '→ previous'], ['self', '→ itself'], ['cls', '→ [CLS]'], ['sep', '→ [SEP]']];

const state = { models: [], overview: null, stats: {}, text: '', layer: 0, head: 0,
  lastHead: null, headController: null, runController: null };

function modelId() {
  return $('model-select').value;
}

function setError(message, field = '') {
  const fieldBox = document.querySelector(`[data-error-for="${field}"]`);
  for (const box of document.querySelectorAll('[data-error-for]')) box.hidden = true;
  $('model-error').hidden = true;
  const box = fieldBox || $('model-error');
  box.hidden = !message;
  box.textContent = message || '';
  $('model-text').setAttribute('aria-invalid', field === 'text' ? 'true' : 'false');
}

function showError(err) {
  const first = (err.errors && err.errors[0]) || { field: '', msg: err.message };
  setError(err.errors ? err.errors.map((e) => e.msg).join('\n') : err.message,
    first.field === 'text' ? 'text' : '');
}

function statOf(name, layer, head) {
  const s = state.stats[name];
  return s ? s.data[layer * s.shape[1] + head] : null;
}

function describe(layer, head) {
  const parts = STATS.filter(([k]) => state.stats[k])
    .map(([k, label]) => `${label} ${short(statOf(k, layer, head))}`);
  return `Layer ${layer}, head ${head}: ${parts.join(', ')}`;
}

function tokenLabels(tokens) {
  return tokens.map((t) => escapePlotly(clip(visible(t))));
}

/** Labels of the pooled rollout cells: the token itself, or "#a–#b" for a block. */
function blockLabels(tokens, block, m) {
  if (block === 1) return tokenLabels(tokens);
  return Array.from({ length: m }, (_, c) =>
    `#${c * block + 1}–#${Math.min((c + 1) * block, tokens.length)}`);
}

function rangeOf(data) {
  let max = 0;
  for (const v of data) if (v > max) max = v;
  return { min: 0, max };
}

function drawRollout(o) {
  const r = decode(o.rollout);
  const s = slice2d(r, 0);
  const labels = blockLabels(o.tokens, o.block, s.rows);
  return plot.heatmap($('rollout-plot'), {
    z: s.rowViews, xLabels: labels, yLabels: labels, xTitle: 'input token (key)',
    yTitle: 'token after the last layer', kind: 'sequential', range: rangeOf(r.data),
    hovertemplate: 'row %{y}, column %{x}<br>rollout %{z:.4g}<extra></extra>',
    height: Math.max(300, Math.min(640, 10 * s.rows + 160)), uirevision: 'rollout',
  });
}

function showStats(layer, head) {
  const box = $('head-stats');
  box.replaceChildren();
  for (const [k, label] of STATS) {
    if (!state.stats[k]) continue;
    const div = el('div');
    div.append(el('dt', label), el('dd', short(statOf(k, layer, head))));
    box.append(div);
  }
}

function syncSliders() {
  $('layer-slider').value = String(state.layer);
  $('head-slider').value = String(state.head);
  $('layer-value').textContent = String(state.layer);
  $('head-value').textContent = String(state.head);
  markCell($('model-grid'), state.layer, state.head);
  showStats(state.layer, state.head);
}

async function drawHead(result) {
  const alpha = decode(result.attention);
  const s = slice2d(alpha, 0);
  const tokens = result.tokens;
  drawHeadView($('head-view'), tokens, s);
  await plot.heatmap($('alpha-plot'), {
    z: s.rowViews, xLabels: tokenLabels(tokens), yLabels: tokenLabels(tokens),
    xTitle: 'key', yTitle: 'query', kind: 'sequential', range: rangeOf(alpha.data),
    hovertemplate: 'query #%{y}, key #%{x}<br>α %{z:.6g}<extra></extra>',
    height: Math.max(300, Math.min(720, 18 * s.rows + 160)),
    uirevision: `alpha-${result.layer}-${result.head}`,
  });
}

function viewerModel(result) {
  const output = result.steps.find((st) => st.id === 'output');
  return toModel({ mechanism: 'multi_head', query_tokens: result.tokens,
    key_tokens: result.tokens, steps: result.steps, attention: result.attention,
    output: output ? output.data : result.attention, notes: result.notes || [] });
}

/** Fetch one head (its steps only while "Step by step" is open) and draw it. */
async function loadHead() {
  const box = $('model-head');
  const withSteps = $('steps-details').open;
  const key = `${modelId()}|${state.text}|${state.layer}|${state.head}|${withSteps}`;
  if (state.lastHead === key) return;
  if (state.headController) state.headController.abort();
  const controller = new AbortController();
  state.headController = controller;
  box.dataset.state = 'loading';
  $('head-title').textContent = `Layer ${state.layer}, head ${state.head}`;
  try {
    const result = await api.modelAttention(modelId(), { text: state.text, layer: state.layer,
      head: state.head, truncate: $('model-truncate').checked, steps: withSteps },
    controller.signal);
    if (controller.signal.aborted) return;
    await drawHead(result);
    if (withSteps && result.steps.length) await viewer.show(viewerModel(result), { step: 'weights' });
    state.lastHead = key;
    box.dataset.layer = String(result.layer);
    box.dataset.head = String(result.head);
    box.dataset.state = 'ready';
  } catch (err) {
    if (err.name === 'AbortError') return;
    box.dataset.state = 'error';
    showError(err);
  }
}

function pick(layer, head, openSteps = false) {
  state.layer = layer;
  state.head = head;
  syncSliders();
  if (openSteps && !$('steps-details').open) {
    $('steps-details').open = true; // its toggle event loads the head with its steps
    return;
  }
  loadHead();
}

async function run(event) {
  if (event) event.preventDefault();
  const text = $('model-text').value;
  if (state.runController) state.runController.abort();
  const controller = new AbortController();
  state.runController = controller;
  state.text = text;
  state.lastHead = null;
  const overviewBox = $('model-overview');
  overviewBox.dataset.state = 'loading';
  $('model-status').textContent = 'Running the model…';
  setError('');
  const t0 = performance.now();
  const head = loadHead(); // in parallel: the server runs the model once for both
  try {
    const o = await api.modelOverview(modelId(), { text, truncate: $('model-truncate').checked },
      controller.signal);
    if (controller.signal.aborted) return;
    state.overview = o;
    state.stats = Object.fromEntries(Object.entries(o.stats).filter(([, v]) => v)
      .map(([k, v]) => [k, decode(v)]));
    $('layer-slider').max = String(o.layers - 1);
    $('head-slider').max = String(o.heads - 1);
    drawGrid($('model-grid'), decode(o.thumbnails), describe, (l, h) => pick(l, h, true));
    syncSliders();
    await Promise.all([drawRollout(o), head]);
    const cut = o.truncated_from ? ` (cut from ${o.truncated_from})` : '';
    $('model-status').textContent = `${o.tokens.length} tokens${cut}, ${o.layers} layers × `
      + `${o.heads} heads, in ${Math.round(performance.now() - t0)} ms.`;
    overviewBox.dataset.tokens = String(o.tokens.length);
    overviewBox.dataset.state = 'ready';
  } catch (err) {
    if (err.name === 'AbortError') return;
    overviewBox.dataset.state = 'error';
    $('model-status').textContent = '';
    showError(err);
  }
}

function describeModel() {
  const m = state.models.find((x) => x.id === modelId());
  $('model-description').textContent = m ? `${m.layers} layers × ${m.heads} heads, d_model `
    + `${m.d_model}, at most ${m.max_tokens} tokens; ${m.source}` : '';
  if (m) {
    $('layer-slider').max = String(m.layers - 1);
    $('head-slider').max = String(m.heads - 1);
  }
}

const viewer = new Viewer({ getRequest: () => ({ model: modelId(), text: state.text,
  layer: state.layer, head: state.head }) });

async function start() {
  $('export-curl').hidden = true; // the viewer's curl is for POST /api/v1/attention
  state.models = await api.getModels();
  $('model-select').replaceChildren(...state.models.map((m) => new Option(`${m.name} (${m.id})`, m.id)));
  describeModel();
  $('model-select').addEventListener('change', () => { describeModel(); run(); });
  $('model-form').addEventListener('submit', run);
  $('layer-slider').addEventListener('input', (e) => pick(Number(e.target.value), state.head));
  $('head-slider').addEventListener('input', (e) => pick(state.layer, Number(e.target.value)));
  $('steps-details').addEventListener('toggle', () => { if (state.text) loadHead(); });
  await run();
}

start().catch((err) => showError(err));
