// Entry point of the pretrained-model page (/model). It asks the server for the overview
// (every head's statistics and ≤ 64 × 64 thumbnails, the rollout) and for one head at a
// time: never all 72 full α matrices. The head's trace steps (X, Q, K, V, scores, α …) are
// fetched only while "Step by step" is open, and then shown by the shared Viewer.
//
// The URL reflects the head on screen (?layer=&head=, counted from 0 like the page's
// labels and the API), so a link can point at a head. /model?share=<id> (where /s/<id>
// sends a real-model share) is the page read-only: text, layer and head from the share's
// request; the head's α, tokens and steps from its STORED result (GET /api/v1/shares/{id},
// the page's JSON twin), never recomputed; the grid and rollout are recomputed from the
// stored text (the model is pinned) unless the share stored them (kind model_overview).
// "Edit a copy" unlocks the form.

import * as api from './api.js';
import { decode, maxOf, short, slice2d } from './arrays.js';
import { drawGrid, markCell } from './model_grid.js';
import { drawHeadView } from './model_headview.js';
import * as plot from './plot.js';
import { toModel } from './result.js';
import { shareLink } from './share_link.js';
import { el, tickLabel, visible } from './text.js';
import { writeView } from './url.js';
import { Viewer } from './viewer.js';

const $ = (id) => document.getElementById(id);
const STATS = [['entropy', 'entropy (nats)'], ['max_weight', 'largest α (mean)'],
  ['prev', '→ previous'], ['self', '→ itself'], ['cls', '→ [CLS]'], ['sep', '→ [SEP]']];

const state = { models: [], overview: null, stats: {}, text: '', layer: 0, head: 0,
  lastHead: null, headController: null, runController: null, shared: null };
/** The form's controls that a read-only (shared) view locks. */
const FORM_CONTROLS = ['model-select', 'model-truncate', 'model-run'];

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
  return tokens.map(tickLabel);
}

/** Labels of the pooled rollout cells: the token itself, or "#a–#b" for a block. */
function blockLabels(tokens, block, m) {
  if (block === 1) return tokenLabels(tokens);
  return Array.from({ length: m }, (_, c) =>
    `#${c * block + 1}–#${Math.min((c + 1) * block, tokens.length)}`);
}

/** The colour range of α or the rollout: 0 to the largest value (flat data or rows). */
function rangeOf(values) {
  return { min: 0, max: maxOf(values) };
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
  writeView({ layer: state.layer, head: state.head });
  $('layer-slider').value = String(state.layer);
  $('head-slider').value = String(state.head);
  $('layer-value').textContent = String(state.layer);
  $('head-value').textContent = String(state.head);
  markCell($('model-grid'), state.layer, state.head);
  showStats(state.layer, state.head);
}

/** Draw head `index` of a head result (one head, or every head of its layer). */
async function drawHead(result, index = 0) {
  const alpha = decode(result.attention);
  const s = slice2d(alpha, index);
  const tokens = result.tokens;
  drawHeadView($('head-view'), tokens, s);
  await plot.heatmap($('alpha-plot'), {
    z: s.rowViews, xLabels: tokenLabels(tokens), yLabels: tokenLabels(tokens),
    xTitle: 'key', yTitle: 'query', kind: 'sequential', range: rangeOf(s.rowViews),
    hovertemplate: 'query #%{y}, key #%{x}<br>α %{z:.6g}<extra></extra>',
    height: Math.max(300, Math.min(720, 18 * s.rows + 160)),
    uirevision: `alpha-${result.layer}-${index}`,
  });
}

function viewerModel(result) {
  return toModel({ mechanism: 'multi_head', query_tokens: result.tokens,
    key_tokens: result.tokens, steps: result.steps, attention: result.attention,
    notes: result.notes || [] });
}

/** Does a model_attention share hold every head of its layer (its request's head is null)? */
function holdsEveryHead(request) {
  return request.head === null || request.head === undefined;
}

/** A shared head (kind model_attention): its layer is fixed, and its head too unless the
 * share holds every head of the layer (request head null). */
function sharedHead() {
  return state.shared && state.shared.kind === 'model_attention' ? state.shared : null;
}

function headsIn(result) {
  const shape = decode(result.attention).shape;
  return shape.length === 3 ? shape[0] : 1;
}

/** Draw the head the share stored: its tokens, α and (if stored) steps, never recomputed. */
async function showStoredHead() {
  const box = $('model-head');
  const { result, request } = state.shared;
  const index = holdsEveryHead(request) ? state.head : 0;
  $('head-title').textContent = `Layer ${result.layer}, head ${state.head} (as shared)`;
  await drawHead(result, index);
  if ($('steps-details').open && result.steps.length) {
    await viewer.show(viewerModel(result), { step: 'weights', head: index });
  }
  box.dataset.layer = String(result.layer);
  box.dataset.head = String(state.head);
  box.dataset.source = 'stored';
  box.dataset.state = 'ready';
}

/** Fetch one head (its steps only while "Step by step" is open) and draw it. */
async function loadHead() {
  if (sharedHead()) return showStoredHead();
  const box = $('model-head');
  const withSteps = $('steps-details').open;
  const key = `${modelId()}|${state.text}|${state.layer}|${state.head}|${withSteps}`;
  if (state.lastHead === key) return undefined;
  if (state.headController) state.headController.abort();
  const controller = new AbortController();
  state.headController = controller;
  box.dataset.state = 'loading';
  $('head-title').textContent = `Layer ${state.layer}, head ${state.head}`;
  try {
    const result = await api.modelAttention(modelId(), { text: state.text, layer: state.layer,
      head: state.head, truncate: $('model-truncate').checked, steps: withSteps },
    controller.signal);
    if (controller.signal.aborted) return undefined;
    await drawHead(result);
    if (withSteps && result.steps.length) await viewer.show(viewerModel(result), { step: 'weights' });
    state.lastHead = key;
    box.dataset.layer = String(result.layer);
    box.dataset.head = String(result.head);
    box.dataset.source = 'live';
    box.dataset.state = 'ready';
  } catch (err) {
    if (err.name === 'AbortError') return undefined;
    box.dataset.state = 'error';
    showError(err);
  }
  return undefined;
}

function pick(layer, head, openSteps = false) {
  const shared = sharedHead();
  if (shared) {
    // read-only: only another stored head of the shared layer (a share of every head)
    const all = holdsEveryHead(shared.request);
    if (layer !== shared.result.layer || !all || head >= headsIn(shared.result)) {
      syncSliders();
      return;
    }
  }
  state.layer = layer;
  state.head = head;
  syncSliders();
  if (openSteps && !$('steps-details').open) {
    $('steps-details').open = true; // its toggle event loads the head with its steps
    return;
  }
  loadHead();
}

/** Draw an overview (live or stored): the grid, the rollout and the status line. */
async function showOverview(o, started) {
  state.overview = o;
  state.stats = Object.fromEntries(Object.entries(o.stats).filter(([, v]) => v)
    .map(([k, v]) => [k, decode(v)]));
  $('layer-slider').max = String(o.layers - 1);
  $('head-slider').max = String(o.heads - 1);
  drawGrid($('model-grid'), decode(o.thumbnails), describe, (l, h) => pick(l, h, true));
  lockHeads();
  syncSliders();
  await drawRollout(o);
  const cut = o.truncated_from ? ` (cut from ${o.truncated_from})` : '';
  const time = started === null ? 'as shared' : `in ${Math.round(performance.now() - started)} ms`;
  $('model-status').textContent = `${o.tokens.length} tokens${cut}, ${o.layers} layers × `
    + `${o.heads} heads, ${time}.`;
  const overviewBox = $('model-overview');
  overviewBox.dataset.tokens = String(o.tokens.length);
  overviewBox.dataset.state = 'ready';
}

async function run(event) {
  if (event) event.preventDefault();
  if (state.shared) return; // read-only until "Edit a copy"
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
    await overview(text, controller, t0);
    await head;
  } catch (err) {
    if (err.name === 'AbortError') return;
    overviewBox.dataset.state = 'error';
    $('model-status').textContent = '';
    showError(err);
  }
}

/** Fetch the overview of `text` and draw it. */
async function overview(text, controller, t0) {
  const o = await api.modelOverview(modelId(), { text, truncate: $('model-truncate').checked },
    controller.signal);
  if (!controller.signal.aborted) await showOverview(o, t0);
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

// this page keeps its own ?layer=&head= (counted from 0) in the URL, not the Viewer's
const viewer = new Viewer({ getRequest: () => ({ model: modelId(), text: state.text,
  layer: state.layer, head: state.head }), writeUrl: false });

// --- share: create a link, and show one read-only ------------------------------------------

function shareHead() {
  if (!state.text) return null;
  // what is on screen: the steps too while "Step by step" is open (a read-only view has
  // them open exactly when its share stored them)
  const request = { model: modelId(), text: state.text, layer: state.layer, head: state.head,
    truncate: $('model-truncate').checked, steps: $('steps-details').open };
  return shareLink({ create: () => api.createModelShare('model_attention', request),
    output: $('share-url'), status: $('share-status') });
}

/** In a shared head's view the grid cells and sliders other than its own heads are locked. */
function lockHeads() {
  const shared = sharedHead();
  const all = Boolean(shared) && holdsEveryHead(shared.request);
  $('layer-slider').disabled = Boolean(shared);
  $('head-slider').disabled = Boolean(shared) && !all;
  for (const b of $('model-grid').querySelectorAll('button.cell')) {
    b.disabled = Boolean(shared) && !(all && Number(b.dataset.layer) === shared.result.layer);
  }
}

function setReadOnly(on) {
  $('app').dataset.readOnly = on ? 'true' : 'false';
  $('model-text').readOnly = on;
  for (const id of FORM_CONTROLS) $(id).disabled = on;
  $('model-share-banner').hidden = !on;
  lockHeads();
}

function summaryRow(term, text) {
  const dl = $('share-summary');
  dl.append(el('dt', term), el('dd', text));
}

/** "Edit a copy": the shared text, layer and head stay; everything is editable and live. */
function editCopy() {
  state.shared = null;
  state.lastHead = null;
  $('steps-details').hidden = false;
  setReadOnly(false);
  writeView({ share: null });
  $('model-text').focus();
}

function showShareError(message) {
  $('model-share-banner').hidden = false;
  $('share-error').hidden = false;
  $('share-error').textContent = message;
  $('model-head').dataset.state = 'error';
  $('model-overview').dataset.state = 'error';
}

/** Open share `id` read-only: its stored numbers, and the live overview of its text. */
async function openShare(id, want) {
  let shared;
  try {
    shared = await api.getShare(id);
  } catch (err) {
    showShareError(err.status === 404 ? 'There is no shared view with this link.' : err.message);
    return;
  }
  if (!String(shared.kind).startsWith('model')) {
    // a step-by-step share: its own page (the template gives its URL, {id} to fill in)
    window.location.replace($('app').dataset.sharePage.replace('{id}', encodeURIComponent(id)));
    return;
  }
  const { request, result } = shared;
  state.shared = shared;
  if (!state.models.some((m) => m.id === request.model)) {
    $('model-select').append(new Option(request.model, request.model));
  }
  $('model-select').value = request.model;
  describeModel();
  $('model-text').value = request.text;
  $('model-truncate').checked = Boolean(request.truncate);
  state.text = request.text;
  $('share-json').href = api.shareJsonUrl(id);
  setReadOnly(true);
  summaryRow('Model', request.model);
  if (shared.kind === 'model_attention') {
    const all = holdsEveryHead(request);
    state.layer = result.layer;
    state.head = all ? Math.min(want.head ?? 0, headsIn(result) - 1) : result.head;
    summaryRow('Layer, head', all ? `layer ${result.layer}, every head` : `layer ${result.layer}, head ${result.head}`);
  } else {
    state.layer = want.layer ?? 0;
    state.head = want.head ?? 0;
    $('model-share-what').textContent = 'The grid, statistics and rollout are the numbers stored '
      + 'with the link; a head you open is computed now from the shared text.';
  }
  summaryRow('Tokens', result.tokens.map(visible).join(' · '));
  summaryRow('Created', shared.created_at || '');
  if (sharedHead() && result.steps.length) $('steps-details').open = true;
  else if (sharedHead()) $('steps-details').hidden = true; // the share stored α, not its steps
  syncSliders();
  await Promise.all([loadHead(), shared.kind === 'model_overview'
    ? showOverview(result, null)
    : overview(request.text, new AbortController(), performance.now())]);
}

function readModelView() {
  const p = new URLSearchParams(window.location.search);
  const int = (key) => {
    const v = Number(p.get(key));
    return p.get(key) !== null && p.get(key) !== '' && Number.isInteger(v) && v >= 0 ? v : null;
  };
  return { share: p.get('share'), layer: int('layer'), head: int('head') };
}

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
  $('share-button').addEventListener('click', shareHead);
  $('edit-copy').addEventListener('click', editCopy);
  const want = readModelView();
  if (want.share) {
    await openShare(want.share, want);
    return;
  }
  const max = (id) => Number($(id).max);
  state.layer = Math.min(want.layer ?? 0, max('layer-slider'));
  state.head = Math.min(want.head ?? 0, max('head-slider'));
  syncSliders();
  await run();
}

start().catch((err) => showError(err));
