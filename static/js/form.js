// The input form: mechanism and preset, inputs, embedding, options, mask, weight editors.
// Options and weight boxes are drawn from the mechanism list the server sends, so nothing
// here repeats a Python constant. The form never clears what the user typed: a request
// that fails shows its errors next to the boxes they are about.

import { MaskGrid } from './mask.js';
import { el } from './text.js';

const $ = (id) => document.getElementById(id);

/** A matrix as JSON text with one row per line (what the paste boxes show). */
export function matrixText(m) {
  if (typeof m === 'string') return m;
  if (!Array.isArray(m)) return '';
  if (!Array.isArray(m[0])) return JSON.stringify(m);
  return `[${m.map((row) => JSON.stringify(row)).join(',\n ')}]`;
}

/** The hidden slot under a box where the server's message about `field` goes. */
function errorSlot(field) {
  const err = el('p', null, 'error');
  err.dataset.errorFor = field;
  err.setAttribute('role', 'alert');
  err.hidden = true;
  return err;
}

const lines = (text) => text.split('\n').map((s) => s.replace(/\r$/, '')).filter((s) => s !== '');

/**
 * How many rows a pasted matrix has, as the server will read it: a bracket opening a row of
 * numbers in JSON / numpy / torch text ("[[1, 0], [0, 1]]" has 2), else one row per line
 * (or per ";"). null when the text is empty.
 */
export function matrixRows(text) {
  if (/\[\s*\[/.test(text)) {
    const rows = text.slice(text.search(/\[\s*\[/)).match(/\[\s*[-+.\d]/g);
    return rows ? rows.length : null;
  }
  const body = text.replace(/^[^[\d\-+.]*\[/, '').replace(/\][^\]]*$/, '');
  const rows = body.split('\n').filter((ln) => ln.trim() && !ln.trim().startsWith('#'));
  if (rows.length === 1) return rows[0].split(';').filter((part) => part.trim()).length;
  return rows.length || null;
}

/** A mask given as text ("1 0\n1 1", "[[1,0],[1,1]]", "1 0; 1 1") as rows of 0/1. */
export function maskRows(text) {
  try {
    const m = JSON.parse(text);
    if (Array.isArray(m) && m.every(Array.isArray)) return m;
  } catch {
    // not JSON: rows of numbers
  }
  const rows = text.replace(/[[\]]/g, ' ').split(/\n|;/).map((ln) => ln.trim())
    .filter((ln) => ln && !ln.startsWith('#'));
  return rows.map((ln) => ln.split(/[\s,]+/).filter(Boolean).map(Number));
}

export class Form {
  constructor(mechanisms, onChange) {
    this.mechanisms = new Map(mechanisms.map((m) => [m.id, m]));
    this.onChange = onChange;
    this.form = $('run-form');
    this.mask = new MaskGrid($('mask-grid'), onChange);
    this.fillMechanisms(mechanisms);
    this.form.addEventListener('input', (e) => this.changed(e));
    this.form.addEventListener('change', (e) => this.changed(e));
    this.form.addEventListener('submit', (e) => e.preventDefault());
  }

  fillMechanisms(mechanisms) {
    const select = $('mechanism');
    for (const m of mechanisms) select.append(new Option(m.title, m.id));
  }

  changed(e) {
    const t = e.target;
    if (t.id === 'mechanism') this.renderMechanism(this.mechanisms.get(t.value), {});
    if (t.id === 'cross') $('key-fieldset').hidden = !t.checked;
    if (t.id === 'mask-kind') {
      this.syncMask();
      this.showMask();
    }
    if (t.dataset && t.dataset.option) this.showConditions();
    if (t.name === 'query-mode' || t.name === 'key-mode') this.showModes();
    if (e.type === 'change' && t.type !== 'radio' && t.tagName === 'TEXTAREA') return;
    if (t.id !== 'preset') this.onChange(e);
  }

  // --- mechanism: description, options, weight boxes ------------------------------------
  renderMechanism(mech, options) {
    $('mechanism').value = mech.id;
    $('mechanism-description').textContent = mech.description || '';
    const box = $('options');
    box.replaceChildren();
    const maskParam = (mech.parameters || []).find((p) => p.type === 'mask');
    for (const p of mech.parameters || []) {
      if (p.type !== 'mask') box.append(this.optionField(p, options[p.name]));
    }
    this.maskChoices(maskParam);
    const weights = $('weights');
    const keep = this.weightTexts();
    weights.replaceChildren();
    for (const w of mech.weights || []) weights.append(this.weightField(w, keep[w.name] || ''));
    this.showConditions();
  }

  /** The mask choices the server lists, plus the 0/1 grid when it takes a matrix. */
  maskChoices(p) {
    const select = $('mask-kind');
    const old = select.value;
    select.closest('.field').hidden = !p;
    if (!p) return;
    select.replaceChildren(...(p.choices || []).map((c) => new Option(c, c)));
    if (p.accepts_matrix) select.append(new Option('custom 0/1 grid', 'grid'));
    select.value = [...select.options].some((o) => o.value === old) ? old : String(p.default ?? 'none');
  }

  /** A weight used only under a condition ("bias = true") shows only when it holds. */
  showConditions() {
    for (const box of document.querySelectorAll('#weights [data-condition]')) {
      const [name, value] = box.dataset.condition.split('=').map((s) => s.trim());
      const input = $(`opt-${name}`);
      let now = null;
      if (input) now = input.dataset.kind === 'boolean' ? String(input.checked) : input.value;
      box.hidden = now !== value;
    }
  }
  optionField(p, value) {
    const id = `opt-${p.name}`;
    const wrap = el('div', null, 'field');
    const label = el('label', p.name);
    label.htmlFor = id;
    let input;
    if (p.type === 'boolean') {
      input = document.createElement('input');
      input.type = 'checkbox';
      input.checked = value === undefined ? Boolean(p.default) : Boolean(value);
      wrap.classList.add('check');
    } else if (p.type === 'integer') {
      input = document.createElement('input');
      input.type = 'number';
      input.step = '1';
      if (p.minimum !== undefined) input.min = String(p.minimum);
      if (p.nullable) input.placeholder = 'default';
      const v = value === undefined ? p.default : value;
      input.value = v === null || v === undefined ? '' : String(v);
    } else {
      input = document.createElement('select');
      for (const c of p.choices || []) input.append(new Option(c, c));
      const v = value === undefined ? p.default : value;
      if (p.accepts_number) {
        input.append(new Option('a number…', '__number'));
        const num = document.createElement('input');
        num.type = 'number';
        num.step = 'any';
        num.id = `${id}-number`;
        num.setAttribute('aria-label', `${p.name} as a number`);
        num.hidden = typeof v !== 'number';
        if (typeof v === 'number') num.value = String(v);
        input.addEventListener('change', () => { num.hidden = input.value !== '__number'; });
        wrap.dataset.number = num.id;
        input.value = typeof v === 'number' ? '__number' : String(v);
        wrap.append(label, input, num);
      } else {
        input.value = String(v);
      }
    }
    input.id = id;
    input.dataset.option = p.name;
    input.dataset.kind = p.type;
    input.dataset.field = `options.${p.name}`;
    if (p.help) {
      const help = el('p', p.help, 'hint');
      help.id = `${id}-help`;
      input.setAttribute('aria-describedby', help.id);
      if (!wrap.contains(input)) wrap.append(label, input);
      wrap.append(help);
    } else if (!wrap.contains(input)) {
      wrap.append(label, input);
    }
    wrap.append(errorSlot(`options.${p.name}`));
    return wrap;
  }

  weightField(w, text) {
    const id = `weight-${w.name}`;
    const wrap = el('div', null, 'field weight');
    if (w.condition) wrap.dataset.condition = w.condition;
    const label = el('label', null, 'weight-label');
    label.htmlFor = id;
    label.append(el('strong', w.name), el('span', `: ${(w.dims || []).join(' × ')}; ${w.role || ''}`));
    label.lastChild.dataset.shapeFor = w.name;
    label.lastChild.dataset.dims = (w.dims || []).join(' × ');
    label.lastChild.dataset.role = w.role || '';
    const box = document.createElement('textarea');
    box.id = id;
    box.rows = 3;
    box.spellcheck = false;
    box.placeholder = 'empty = random from the seed';
    box.dataset.weight = w.name;
    box.dataset.field = `weights.${w.name}`;
    box.value = text;
    wrap.append(label, box, errorSlot(`weights.${w.name}`));
    return wrap;
  }

  weightTexts() {
    const out = {};
    for (const box of document.querySelectorAll('#weights textarea')) {
      if (!box.closest('.weight').hidden) out[box.dataset.weight] = box.value;
    }
    return out;
  }

  /** Numbers next to the symbols once a run tells us the sizes: "8 × 4 = d_model × d_k". */
  showSizes(sizes) {
    for (const span of document.querySelectorAll('[data-shape-for]')) {
      const dims = span.dataset.dims;
      const nums = dims.split(' × ').map((d) => (sizes && d in sizes ? sizes[d] : null));
      const known = nums.every((n) => n !== null) && nums.length;
      span.textContent = known ? `: ${nums.join(' × ')} = ${dims}; ${span.dataset.role}`
        : `: ${dims}; ${span.dataset.role}`;
    }
  }

  // --- inputs --------------------------------------------------------------------------
  /** The input mode chosen for `side` ("query" or "key"): text, tokens or matrix. */
  inputMode(side) {
    return this.form.querySelector(`input[name="${side}-mode"]:checked`).value;
  }

  showModes() {
    for (const side of ['query', 'key']) {
      const mode = this.inputMode(side);
      const fs = this.form.querySelector(`fieldset[data-side="${side}"]`);
      fs.dataset.mode = mode;
      fs.querySelector('.mode-label').textContent = {
        text: `${side === 'query' ? 'Query' : 'Key/value'} text (tokens are split on whitespace)`,
        tokens: 'Tokens, one per line (a token may contain spaces)',
        matrix: 'Matrix n × d_model, rows are tokens (JSON, CSV/TSV, whitespace rows, numpy/torch repr)',
      }[mode];
      fs.querySelector('.labels').hidden = mode !== 'matrix';
      fs.querySelector('.labels-label').hidden = mode !== 'matrix';
    }
  }

  setSide(side, value) {
    const text = $(`${side}-text`);
    const labels = $(`${side}-labels`);
    let mode = 'text';
    labels.value = '';
    if (value && value.matrix !== undefined && value.matrix !== null) {
      mode = 'matrix';
      text.value = matrixText(value.matrix);
      labels.value = (value.tokens || []).join('\n');
    } else if (value && value.tokens) {
      mode = 'tokens';
      text.value = value.tokens.join('\n');
    } else {
      text.value = (value && value.text) || '';
    }
    this.form.querySelector(`input[name="${side}-mode"][value="${mode}"]`).checked = true;
  }

  side(side) {
    const mode = this.inputMode(side);
    const text = $(`${side}-text`).value;
    if (mode === 'text') return { text };
    if (mode === 'tokens') return { tokens: lines(text) };
    const labels = lines($(`${side}-labels`).value);
    return labels.length ? { matrix: text, tokens: labels } : { matrix: text };
  }

  /**
   * The tokens each side has now (text split on whitespace, one token a line, or one row of
   * the matrix each), or null when a matrix's rows cannot be counted here; the key side is
   * the query side unless cross-attention is on.
   */
  currentTokens(side) {
    if (side === 'key' && !$('cross').checked) return this.currentTokens('query');
    const mode = this.inputMode(side);
    const text = $(`${side}-text`).value;
    if (mode === 'text') return text.split(/\s+/).filter(Boolean);
    if (mode === 'tokens') return lines(text);
    const labels = lines($(`${side}-labels`).value);
    if (labels.length) return labels;
    const n = matrixRows(text);
    return n === null ? null : Array.from({ length: n }, (_, i) => String(i + 1));
  }

  /** The 0/1 grid takes the size of the current input (keeping the cells that still fit). */
  syncMask() {
    if ($('mask-kind').value !== 'grid') return;
    const q = this.currentTokens('query');
    const k = this.currentTokens('key');
    if (!q || !k || !q.length || !k.length) return;
    const same = (a, b) => a.length === b.length && a.every((t, i) => t === b[i]);
    const m = this.mask.matrix;
    if (m && m.length === q.length && m[0].length === k.length
      && same(this.mask.queryTokens, q) && same(this.mask.keyTokens, k)) return; // keep focus
    this.mask.resize(q, k);
  }

  // --- the whole request -----------------------------------------------------------------
  /**
   * Fill the form from a request. `used` (optional) are the weights a stored result says were
   * used ({name: nested lists}): they go into the weight boxes, so a copy reproduces the
   * stored numbers even if a later version draws random weights differently.
   */
  load(request, used = null) {
    const mech = this.mechanisms.get(request.mechanism) || this.mechanisms.values().next().value;
    for (const box of document.querySelectorAll('#weights textarea')) box.value = '';
    const options = { ...(request.options || {}) };
    const mask = options.mask;
    delete options.mask;
    this.renderMechanism(mech, options);
    this.setSide('query', request.query);
    $('cross').checked = Boolean(request.key);
    $('key-fieldset').hidden = !request.key;
    this.setSide('key', request.key || { text: '' });
    const emb = request.embedding || {};
    for (const [name, id] of [['kind', 'emb-kind'], ['dim', 'emb-dim'], ['seed', 'emb-seed'],
      ['positions', 'emb-positions']]) {
      $(id).value = String(emb[name] ?? $(id).dataset.default);
    }
    const given = request.weights && typeof request.weights === 'object' ? request.weights : {};
    // the API takes the seed at the top level or inside weights (DESIGN's example)
    $('weights-seed').value = String(request.seed ?? given.seed ?? 0);
    for (const [name, w] of Object.entries({ ...given, ...(used || {}) })) {
      const box = name === 'seed' ? null : $(`weight-${name}`);
      if (box && w !== null && w !== undefined) box.value = matrixText(w);
    }
    const named = typeof mask === 'string'
      && [...$('mask-kind').options].some((o) => o.value === mask && o.value !== 'grid');
    if (Array.isArray(mask) || (typeof mask === 'string' && mask.trim() && !named)) {
      $('mask-kind').value = 'grid';
      this.mask.set(Array.isArray(mask) ? mask : maskRows(mask));
    } else {
      $('mask-kind').value = mask || 'none';
    }
    this.showMask();
    this.showModes();
    this.clearErrors();
  }

  showMask() {
    $('mask-grid').hidden = $('mask-kind').value !== 'grid';
  }

  options() {
    const out = {};
    for (const input of document.querySelectorAll('#options [data-option]')) {
      const name = input.dataset.option;
      if (input.dataset.kind === 'boolean') out[name] = input.checked;
      else if (input.dataset.kind === 'integer') {
        if (input.value.trim() !== '') out[name] = Number(input.value);
      } else if (input.value === '__number') {
        const num = $(`${input.id}-number`).value;
        if (num.trim() !== '') out[name] = Number(num);
      } else out[name] = input.value;
    }
    const kind = $('mask-kind').value;
    if (kind === 'causal') out.mask = 'causal';
    if (kind === 'grid' && this.mask.value()) out.mask = this.mask.value();
    return out;
  }

  request() {
    this.syncMask();
    const weights = {};
    for (const [name, text] of Object.entries(this.weightTexts())) {
      if (text.trim() !== '') weights[name] = text;
    }
    const num = (id) => Number($(id).value || $(id).dataset.default);
    return {
      mechanism: $('mechanism').value,
      query: this.side('query'),
      key: $('cross').checked ? this.side('key') : null,
      embedding: { kind: $('emb-kind').value, dim: num('emb-dim'), seed: num('emb-seed'),
        positions: $('emb-positions').value },
      weights,
      seed: num('weights-seed'),
      options: this.options(),
    };
  }

  /** After a run: the mask grid takes the tokens' size, weight labels their numbers. */
  update(model) {
    if (!this.mask.matrix || this.mask.matrix.length !== model.queryTokens.length
      || this.mask.matrix[0].length !== model.keyTokens.length
      || this.mask.queryTokens.length !== model.queryTokens.length) {
      this.mask.resize(model.queryTokens, model.keyTokens);
    }
    this.showSizes(model.sizes);
  }

  // --- errors ----------------------------------------------------------------------------
  clearErrors() {
    for (const p of document.querySelectorAll('#app [data-error-for]')) {
      p.hidden = true;
      p.textContent = '';
    }
    for (const x of document.querySelectorAll('#run-form [aria-invalid]')) x.removeAttribute('aria-invalid');
  }

  /** Each error next to the box its field names (the longest matching prefix). */
  showErrors(errors) {
    this.clearErrors();
    const slots = [...document.querySelectorAll('#app [data-error-for]')];
    for (const { field, msg } of errors) {
      const slot = bestMatch(slots, field, (s) => s.dataset.errorFor) || $('form-error');
      slot.hidden = false;
      slot.textContent = slot.textContent ? `${slot.textContent}\n${msg}` : msg;
      const input = bestMatch([...document.querySelectorAll('#run-form [data-field]')], field,
        (x) => x.dataset.field);
      if (input) input.setAttribute('aria-invalid', 'true');
    }
  }
}

function bestMatch(nodes, field, keyOf) {
  let best = null;
  let bestLen = -1;
  for (const n of nodes) {
    const key = keyOf(n);
    const fits = key === field || (key && field.startsWith(`${key}.`));
    if (fits && key.length > bestLen) {
      best = n;
      bestLen = key.length;
    }
  }
  return best;
}
