// Files a user can take away: a step as CSV, the result as JSON, the API call as curl.
// (Images go through plot.js, the only module that talks to Plotly.)

import { apiUrl } from './api.js';
import { slice2d } from './arrays.js';
import { axisLabels, view } from './result.js';
import { visible } from './text.js';

/** One CSV field: quoted when needed; a leading =, +, -, @ cannot start a spreadsheet formula. */
export function csvField(text) {
  let s = String(text);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A float64 as text that reads back to exactly the same number (JS's shortest round trip). */
function numberText(v, drawn) {
  if (v !== null && v !== undefined) return String(v);
  // the plain encoding writes a non-finite number as null: say which one it was
  if (drawn === -Infinity) return '-inf';
  if (drawn === Infinity) return 'inf';
  return 'nan';
}

/** Row i of head h of a nested plain array shaped like `step` (as the API sent it). */
function plainRow(data, hasHead, h, i) {
  if (hasHead) return data[h][i];
  return Array.isArray(data[0]) ? data[i] : data;
}

/**
 * A step as CSV: a header of column labels ("2:saw"), then one line per row (and per head,
 * with a leading head column). The numbers are the API's plain float64 numbers (`plainStep`,
 * the same step from the plain encoding), each written so it parses back to exactly that
 * number; labels are guarded against spreadsheet formulas, numbers are not touched.
 */
export function stepCsv(model, step, plainStep) {
  const v = view(model, step, 0);
  const { hasHead } = v;
  const heads = hasHead ? step.shape[0] : 1;
  // a 1-D step is one row: its header says "row" and the row is numbered
  const rowAxis = v.rowAxis || 'row';
  const rowLabels = v.rowAxis ? v.rowLabels : axisLabels(model, rowAxis, v.slice.rows);
  const header = [...(hasHead ? ['head'] : []), rowAxis,
    ...v.colLabels.map((t, j) => `${j + 1}:${visible(t)}`)];
  const out = [header.map(csvField).join(',')];
  for (let h = 0; h < heads; h += 1) {
    const s = slice2d(step.tensor, h);
    for (let i = 0; i < s.rows; i += 1) {
      const labels = [...(hasHead ? [String(h + 1)] : []), `${i + 1}:${visible(rowLabels[i])}`];
      const row = plainRow(plainStep.data, hasHead, h, i);
      const cells = Array.from({ length: s.cols }, (_, j) => numberText(row[j], s.get(i, j)));
      out.push([...labels.map(csvField), ...cells].join(','));
    }
  }
  return `${out.join('\r\n')}\r\n`;
}

/** The whole result as the API's plain JSON (float64 numbers; non-finite numbers as null). */
export function resultJson(plainResult, request) {
  return JSON.stringify({ request, result: plainResult }, null, 1);
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
