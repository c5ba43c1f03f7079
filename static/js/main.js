// Entry point: the home page (form + viewer) or a read-only share page (viewer only).

import * as api from './api.js';
import { Form } from './form.js';
import { toModel } from './result.js';
import { initSqrtDk } from './sqrtdk.js';
import { shareLink } from './share_link.js';
import { readView, writeView } from './url.js';
import { Viewer } from './viewer.js';
import { visible } from './text.js';

const $ = (id) => document.getElementById(id);
const DEBOUNCE_MS = 300;

function debounce(fn, ms) {
  let t = null;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

function fail(message) {
  const box = $('viewer-error');
  box.hidden = false;
  box.textContent = message;
  $('viewer').dataset.state = 'error';
}

// --- home ------------------------------------------------------------------------------
async function startHome() {
  const [mechanisms, presets] = await Promise.all([api.getMechanisms(), api.getPresets()]);
  let lastRequest = null;
  let controller = null;
  let plain = null; // {request, promise}: the plain result of lastRequest, fetched on demand
  const viewer = new Viewer({
    getRequest: () => lastRequest,
    getPlain: () => {
      if (!plain || plain.request !== lastRequest) {
        plain = { request: lastRequest, promise: api.runAttentionPlain(lastRequest) };
      }
      return plain.promise;
    },
  });
  const want = readView();

  async function run(view = {}) {
    const request = form.request();
    if (controller) controller.abort();
    controller = new AbortController();
    $('run-status').textContent = 'Computing…';
    try {
      const result = await api.runAttention(request, controller.signal);
      const model = toModel(result);
      form.clearErrors();
      form.update(model);
      lastRequest = request;
      $('run-status').textContent = `${model.queryTokens.length} query × ${model.keyTokens.length} `
        + `key tokens, ${model.heads} head${model.heads > 1 ? 's' : ''}, ${model.steps.length} steps.`;
      await viewer.show(model, view);
    } catch (err) {
      if (err.name === 'AbortError') return;
      form.showErrors(err instanceof api.ApiError ? err.errors : [{ field: '', msg: err.message }]);
      $('run-status').textContent = 'Not updated: see the message next to the input.';
      if (!viewer.model) $('viewer').dataset.state = 'error';
    }
  }

  const form = new Form(mechanisms, debounce(() => {
    $('preset').value = '';
    $('preset-description').textContent = '';
    writeView({ preset: null });
    run();
  }, DEBOUNCE_MS));

  const choose = wirePresets(presets, form, run);
  $('share-button').addEventListener('click', () => share(() => lastRequest));
  initSqrtDk();

  if (want.copy) await loadCopy(form, want.copy, presets[0]);
  else choose(presets.find((p) => p.id === want.preset) || presets[0]);
  await run({ step: want.step, head: want.head });
}

/**
 * Fill the preset list; choosing one there loads it into the form, puts it in the URL and
 * runs it. Returns choose(preset), which shows a preset in the form without running it.
 */
function wirePresets(presets, form, run) {
  const presetSelect = $('preset');
  for (const p of presets) presetSelect.append(new Option(p.title, p.id));
  const choose = (preset) => {
    presetSelect.value = preset.id;
    $('preset-description').textContent = preset.description || '';
    form.load(preset.request);
  };
  presetSelect.addEventListener('change', () => {
    const preset = presets.find((p) => p.id === presetSelect.value);
    if (!preset) return;
    choose(preset);
    writeView({ preset: preset.id });
    run();
  });
  return choose;
}

/**
 * "Edit a copy" (?copy=<id>): the shared request, and the weights it used, go into the form
 * (`fallback`, a preset, if the share cannot be loaded); ?copy= then leaves the URL.
 */
async function loadCopy(form, id, fallback) {
  try {
    // plain float64: the weights that were used go into the boxes exactly
    const shared = await api.getSharePlain(id);
    form.load(shared.request, shared.result && shared.result.weights);
    $('preset-description').textContent = 'A copy of a shared view: edit anything.';
  } catch (err) {
    form.load(fallback.request);
    form.showErrors([{ field: '', msg: `The shared view could not be loaded: ${err.message}` }]);
  }
  writeView({ copy: null });
}

/** The home page's share: the request on screen, the link keeping its step and head. */
function share(getRequest) {
  const request = getRequest();
  if (!request) return null;
  return shareLink({ create: () => api.createShare(request), output: $('share-url'),
    status: $('share-status'), carry: ['step', 'head'] });
}

// --- share page ---------------------------------------------------------------------------
function summary(shared, model) {
  const dl = $('share-summary');
  const row = (term, text) => {
    const dt = document.createElement('dt');
    dt.textContent = term;
    const dd = document.createElement('dd');
    dd.textContent = text;
    dl.append(dt, dd);
  };
  row('Mechanism', model.mechanism);
  row('Query tokens', model.queryTokens.map(visible).join(' · '));
  if (shared.request && shared.request.key) row('Key tokens', model.keyTokens.map(visible).join(' · '));
  row('Created', shared.created_at || '');
}

async function startShare() {
  const id = $('app').dataset.shareId;
  let shared = null;
  let plain = null;
  const viewer = new Viewer({
    getRequest: () => shared && shared.request,
    getPlain: () => {
      plain = plain || api.getSharePlain(id).then((s) => s.result);
      return plain;
    },
  });
  try {
    shared = await api.getShare(id);
  } catch (err) {
    fail(err.status === 404 ? 'There is no shared view with this link.' : err.message);
    return;
  }
  const model = toModel(shared.result);
  summary(shared, model);
  await viewer.show(model, readView());
}

const page = $('app').dataset.page;
(page === 'share' ? startShare() : startHome()).catch((err) => fail(`The page could not start: ${err.message}`));
