// Files a user can take away: a step as CSV, the result as JSON, the API call as curl.
// (Images go through plot.js, the only module that talks to Plotly.)

import { apiUrl } from './api.js';
import { exact, slice2d, toNested } from './arrays.js';
import { axisLabels } from './result.js';
import { visible } from './text.js';

/** One CSV field: quoted when needed; a leading =, +, -, @ cannot start a spreadsheet formula. */
export function csvField(text) {
  let s = String(text);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * A step as CSV: a header of column labels ("2:saw"), then one line per row (and per head,
 * with a leading head column). Numbers are written with 9 significant digits, which read
 * back to exactly the same float32.
 */
export function stepCsv(model, step) {
  const axes = step.axes.filter((a) => a !== 'head');
  const hasHead = step.axes[0] === 'head';
  const heads = hasHead ? step.shape[0] : 1;
  const first = slice2d(step.tensor, 0);
  const rowAxis = axes.length >= 2 ? axes[0] : 'row';
  const colAxis = axes[axes.length - 1];
  const rowLabels = axisLabels(model, rowAxis, first.rows);
  const colLabels = axisLabels(model, colAxis, first.cols);
  const header = [...(hasHead ? ['head'] : []), rowAxis,
    ...colLabels.map((t, j) => `${j + 1}:${visible(t)}`)];
  const out = [header.map(csvField).join(',')];
  for (let h = 0; h < heads; h += 1) {
    const s = slice2d(step.tensor, h);
    for (let i = 0; i < s.rows; i += 1) {
      const cells = [...(hasHead ? [String(h + 1)] : []), `${i + 1}:${visible(rowLabels[i])}`];
      for (let j = 0; j < s.cols; j += 1) cells.push(exact(s.get(i, j)));
      out.push(cells.map(csvField).join(','));
    }
  }
  return `${out.join('\r\n')}\r\n`;
}

/** The whole result as plain JSON (nested lists; −∞ and other non-finite numbers as null). */
export function resultJson(model, request) {
  const r = model.raw;
  return JSON.stringify({
    request,
    result: {
      mechanism: r.mechanism,
      query_tokens: r.query_tokens,
      key_tokens: r.key_tokens,
      notes: r.notes || [],
      steps: model.steps.map((s) => ({ id: s.id, title: s.title, formula: s.formula,
        shape: s.shape, axes: s.axes, note: s.note, data: toNested(s.tensor) })),
      attention: toNested(model.attention),
      output: toNested(model.output),
    },
  }, null, 1);
}

/** A shell command that reproduces the view with the JSON API (single quotes escaped). */
export function curlCommand(request) {
  const body = JSON.stringify(request).replace(/'/g, "'\\''");
  return `curl -X POST ${apiUrl('/attention')} -H 'Content-Type: application/json' -d '${body}'`;
}

/** Offer `text` as a file download. */
export function saveText(filename, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** A file-name-safe piece of text. */
export function safeName(text) {
  return String(text).replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 40) || 'step';
}
