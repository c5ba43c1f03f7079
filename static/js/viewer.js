// The step-by-step viewer: one step at a time (Prev / Next, ← →, Play), its heatmap, the
// cell inspector, the values table, the head grid and the exports. Shared by the home page
// and the read-only share page.

import { short } from './arrays.js';
import { explain } from './explain.js';
import { curlCommand, resultJson, safeName, saveText, stepCsv } from './exports.js';
import { drawHeads, markHead } from './heads.js';
import { view } from './result.js';
import * as plot from './plot.js';
import { renderTable } from './table.js';
import { el, escapePlotly, numbered, tickLabel } from './text.js';
import { writeView } from './url.js';

const $ = (id) => document.getElementById(id);
const PLAY_MS = 1500;

/** Rows for Plotly: views of the data, or copies with NaN (a gap) where the mask removes a cell. */
function zRows(v) {
  return v.slice.rowViews.map((row, i) => {
    if (!row.some((_, j) => v.masked(i, j))) return row;
    return Float64Array.from(row, (x, j) => (v.masked(i, j) ? NaN : x));
  });
}

function hoverData(v) {
  const rows = v.rowLabels.map((t, i) => escapePlotly(v.rowAxis ? numbered(t, i) : ''));
  const cols = v.colLabels.map((t, j) => escapePlotly(numbered(t, j)));
  const masked = (i, j) => (v.masked(i, j) ? ` (masked, ${short(v.slice.get(i, j))})` : '');
  return rows.map((r, i) => cols.map((c, j) => [r, c, masked(i, j)]));
}

export class Viewer {
  /**
   * getRequest() -> the request behind the view (for curl and the JSON export);
   * getPlain() -> a promise of the same result in the plain encoding (float64 numbers), which
   * the CSV and JSON exports write so they equal the API's numbers exactly.
   * writeUrl (default true): keep ?step=&head= in the page's URL; a page with URL state of
   * its own (the model page) turns it off.
   */
  constructor({ getRequest, getPlain, writeUrl = true }) {
    this.getRequest = getRequest;
    this.getPlain = getPlain;
    this.writeUrl = writeUrl;
    this.model = null;
    this.index = 0;
    this.head = 0;
    this.highlightRow = null;
    this.pinned = null;
    this.timer = null;
    this.draws = 0;
    this.drawnIndex = null; // the step index Plotly last finished drawing
    this.hooked = false; // hover and click handlers are attached once, after the first draw
    this.plotEl = $('step-plot');
    this.bind();
  }

  bind() {
    $('step-prev').addEventListener('click', () => this.go(this.index - 1));
    $('step-next').addEventListener('click', () => this.go(this.index + 1));
    $('step-play').addEventListener('click', () => this.togglePlay());
    $('step-select').addEventListener('change', (e) => this.go(Number(e.target.value)));
    $('head-select').addEventListener('change', (e) => this.focusHead(Number(e.target.value)));
    $('highlight-select').addEventListener('change', (e) =>
      this.setHighlight(e.target.value === '' ? null : Number(e.target.value)));
    $('values-details').addEventListener('toggle', () => this.drawTable());
    document.addEventListener('keydown', (e) => this.onKey(e));
    $('export-png').addEventListener('click', () => this.image('png'));
    $('export-svg').addEventListener('click', () => this.image('svg'));
    $('export-csv').addEventListener('click', () => this.csv());
    $('export-json').addEventListener('click', () => this.json());
    $('export-curl').addEventListener('click', () => this.curl());
  }

  onKey(e) {
    if (!this.model || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
    if (e.key === 'ArrowLeft') this.go(this.index - 1);
    else if (e.key === 'ArrowRight') this.go(this.index + 1);
    else return;
    e.preventDefault();
  }

  /** Show a new result; keep the step (by id) and head if they still exist. */
  show(model, want = {}) {
    const prevId = this.model ? this.model.steps[this.index].id : null;
    this.model = model;
    const wantId = want.step || prevId;
    const found = model.steps.findIndex((s) => s.id === wantId);
    this.index = found >= 0 ? found : model.steps.findIndex((s) => s.id === 'weights');
    if (this.index < 0) this.index = 0;
    const head = want.head ?? this.head;
    this.head = Math.min(Math.max(head, 0), model.heads - 1);
    if (this.highlightRow !== null && this.highlightRow >= model.queryTokens.length) this.highlightRow = null;
    this.pinned = null;
    this.fillControls();
    const notes = $('run-notes');
    notes.hidden = !model.notes.length;
    notes.textContent = model.notes.join(' ');
    $('viewer-error').hidden = true;
    const drawn = this.draw();
    drawHeads($('head-grid'), model, this.head, (h) => this.focusHead(h));
    return drawn;
  }

  fillControls() {
    const m = this.model;
    const select = $('step-select');
    select.replaceChildren(...m.steps.map((s, i) => new Option(`${i + 1}. ${s.title}`, String(i))));
    const list = $('step-list');
    list.replaceChildren(...m.steps.map((s, i) => {
      const li = document.createElement('li');
      const b = el('button', s.title);
      b.type = 'button';
      b.dataset.stepId = s.id;
      b.addEventListener('click', () => this.go(i));
      li.append(b);
      return li;
    }));
    $('head-select').replaceChildren(...Array.from({ length: m.heads },
      (_, h) => new Option(`head ${h + 1} of ${m.heads}`, String(h))));
    $('head-select').disabled = m.heads < 2;
    $('highlight-select').replaceChildren(new Option('none', ''),
      ...m.queryTokens.map((t, i) => new Option(numbered(t, i), String(i))));
    $('highlight-select').value = this.highlightRow === null ? '' : String(this.highlightRow);
  }

  go(index) {
    if (!this.model) return;
    const n = this.model.steps.length;
    const next = Math.min(Math.max(index, 0), n - 1);
    if (next === this.index && this.drawnIndex === next) return;
    this.index = next;
    this.pinned = null;
    this.draw();
  }

  focusHead(h) {
    if (!this.model) return;
    this.head = Math.min(Math.max(h, 0), this.model.heads - 1);
    const alpha = this.model.steps.findIndex((s) => s.id === 'weights');
    if (alpha >= 0 && !this.model.steps[this.index].axes.includes('head')) this.index = alpha;
    this.draw();
    $('viewer').scrollIntoView({ block: 'start' });
  }

  setHighlight(row) {
    this.highlightRow = row;
    $('highlight-select').value = row === null ? '' : String(row);
    const v = this.currentView();
    plot.highlight(this.plotEl, v.rowAxis === 'query' ? row : null, v.slice.cols);
  }

  currentView() {
    return view(this.model, this.model.steps[this.index], this.head);
  }

  /** Draw the current step; resolves once Plotly has drawn it. */
  draw() {
    const m = this.model;
    const step = m.steps[this.index];
    const v = this.currentView();
    const box = $('viewer');
    box.dataset.state = 'drawing';
    $('step-title').textContent = step.title;
    $('step-formula').textContent = step.formula;
    $('step-shape').textContent = step.shape.join(' × ');
    $('step-axes').textContent = step.axes.join(', ');
    $('step-note').hidden = !step.note;
    $('step-note').textContent = step.note || '';
    $('step-select').value = String(this.index);
    $('head-select').value = String(this.head);
    for (const b of $('step-list').querySelectorAll('button')) {
      if (b.dataset.stepId === step.id) b.setAttribute('aria-current', 'step');
      else b.removeAttribute('aria-current');
    }
    $('step-prev').disabled = this.index === 0;
    $('step-next').disabled = this.index === m.steps.length - 1;
    this.plotEl.setAttribute('aria-label', `Heatmap of ${step.title}, ${step.shape.join(' × ')}`
      + (v.hasHead ? `, head ${this.head + 1}` : ''));
    markHead($('head-grid'), this.head);
    if (this.writeUrl) writeView({ step: step.id, head: m.heads > 1 ? this.head + 1 : null });
    this.drawTable();
    this.showCell(null);
    const rowTitle = v.rowAxis || '';
    const colTitle = v.colAxis;
    const spec = {
      z: zRows(v),
      xLabels: v.colLabels.map(tickLabel),
      yLabels: v.rowLabels.map(tickLabel),
      xTitle: colTitle,
      yTitle: rowTitle,
      kind: step.range.min >= 0 ? 'sequential' : 'diverging',
      range: step.range,
      customdata: hoverData(v),
      hovertemplate: `${escapePlotly(rowTitle)} %{customdata[0]}<br>${escapePlotly(colTitle)} `
        + '%{customdata[1]}<br>value %{z:.6g}%{customdata[2]}<extra></extra>',
      highlightRow: v.rowAxis === 'query' ? this.highlightRow : null,
      height: Math.max(260, Math.min(720, 22 * v.slice.rows + 140)),
      uirevision: `${step.id}-${this.head}`,
    };
    const drawnIndex = this.index;
    return plot.heatmap(this.plotEl, spec).then(() => {
      if (!this.hooked) {
        plot.onCell(this.plotEl, 'hover', (c) => { if (this.pinned === null) this.showCell(c); });
        plot.onCell(this.plotEl, 'click', (c) => this.pin(c));
        this.hooked = true;
      }
      this.drawnIndex = drawnIndex;
      this.draws += 1;
      box.dataset.stepId = step.id;
      box.dataset.head = String(this.head);
      box.dataset.draws = String(this.draws);
      box.dataset.state = 'ready';
    });
  }

  pin(cell) {
    this.pinned = cell;
    this.showCell(cell);
    if (this.currentView().rowAxis === 'query') this.setHighlight(cell.row);
  }

  showCell(cell) {
    const box = $('cell-info');
    box.replaceChildren();
    if (!cell) {
      box.append(el('p', 'Hover or click a cell to see its exact value and how it came about.', 'hint'));
      return;
    }
    for (const line of explain(this.model, this.index, this.head, cell.row, cell.col)) {
      box.append(el('p', line));
    }
  }

  drawTable() {
    if (!$('values-details').open || !this.model) return;
    const step = this.model.steps[this.index];
    const v = this.currentView();
    renderTable($('values-table-wrap'), v, `${step.title}${v.hasHead ? `, head ${this.head + 1}` : ''}`);
  }

  togglePlay() {
    const button = $('step-play');
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    } else {
      if (this.index === this.model.steps.length - 1) this.go(0);
      this.timer = setInterval(() => {
        if (this.index >= this.model.steps.length - 1) this.togglePlay();
        else this.go(this.index + 1);
      }, PLAY_MS);
    }
    button.setAttribute('aria-pressed', this.timer ? 'true' : 'false');
    button.textContent = this.timer ? 'Pause' : 'Play';
  }

  // --- exports ------------------------------------------------------------------------
  fileBase() {
    const step = this.model.steps[this.index];
    return `attnscope-${safeName(this.model.mechanism)}-${safeName(step.id)}`
      + (step.axes[0] === 'head' ? `-head${this.head + 1}` : '');
  }

  status(text) {
    $('export-status').textContent = text;
  }

  image(format) {
    if (!this.model) return;
    plot.download(this.plotEl, format, this.fileBase()).then(
      () => this.status(`${format.toUpperCase()} saved.`),
      (err) => this.status(`Could not save the image: ${err.message}`));
  }

  /** The plain (float64) result of what is drawn now, or null (with a message) if it fails. */
  async plain() {
    const model = this.model;
    this.status('Fetching the exact numbers…');
    try {
      const result = await this.getPlain();
      return this.model === model ? result : null;
    } catch (err) {
      this.status(`Could not fetch the exact numbers: ${err.message}`);
      return null;
    }
  }

  async csv() {
    if (!this.model) return;
    const { model } = this;
    const step = model.steps[this.index];
    const result = await this.plain();
    const plainStep = result && result.steps.find((s) => s.id === step.id);
    if (!plainStep) return;
    saveText(`attnscope-${safeName(model.mechanism)}-${safeName(step.id)}.csv`,
      stepCsv(model, step, plainStep), 'text/csv');
    this.status('CSV saved.');
  }

  async json() {
    if (!this.model) return;
    const { mechanism } = this.model;
    const result = await this.plain();
    if (!result) return;
    saveText(`attnscope-${safeName(mechanism)}.json`, resultJson(result, this.getRequest()),
      'application/json');
    this.status('JSON saved.');
  }

  curl() {
    if (!this.model) return;
    const text = curlCommand(this.getRequest());
    const pre = $('curl-text');
    pre.hidden = false;
    pre.textContent = text;
    const done = () => this.status('curl command copied.');
    const shown = () => this.status('curl command shown below (copy it from there).');
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, shown);
    } else shown();
  }
}
