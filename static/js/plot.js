// The only module that touches window.Plotly. Figures are built here from a fixed template
// and numbers; user text arrives already escaped (text.js) and only through tick labels and
// customdata, never inside a hovertemplate.

const Plotly = () => {
  if (!window.Plotly) throw new Error('plotly.js did not load');
  return window.Plotly;
};

const CONFIG = { displaylogo: false, responsive: true,
  modeBarButtonsToRemove: ['sendDataToCloud', 'select2d', 'lasso2d'] };

// ColorBrewer PuOr (colour-blind safe, diverging): purple below 0, orange above.
const PUOR = ['#2d004b', '#542788', '#8073ac', '#b2abd2', '#d8daeb', '#f7f7f7',
  '#fee0b6', '#fdb863', '#e08214', '#b35806', '#7f3b08'];
const DIVERGING = PUOR.map((c, i) => [i / (PUOR.length - 1), c]);

/**
 * Tick positions and texts: every label up to 64, every k-th beyond. Labels along x turn
 * when there are many; labels along y stay level (they stack, and turning them would make
 * neighbours overlap).
 */
function ticks(labels, along = 'x') {
  const n = labels.length;
  const every = n <= 64 ? 1 : Math.ceil(n / 48);
  const tickvals = [];
  const ticktext = [];
  for (let i = 0; i < n; i += every) {
    tickvals.push(i);
    ticktext.push(labels[i]);
  }
  return { tickmode: 'array', tickvals, ticktext, tickangle: along === 'x' && n > 12 ? -60 : 0,
    tickfont: { size: n > 32 ? 9 : 12 } };
}

function colours(kind, range) {
  if (kind === 'sequential') {
    return { colorscale: 'Viridis', zmin: Math.min(0, range.min), zmax: Math.max(range.max, 1e-12) };
  }
  const m = Math.max(Math.abs(range.min), Math.abs(range.max), 1e-12);
  return { colorscale: DIVERGING, zmin: -m, zmax: m }; // symmetric: 0 is the middle colour
}

// Up to 32 × 32 cells a 1 px gap outlines every cell. Above that, plotly.js's image path
// ('fast': one pixel per cell, scaled up) draws 512 × 512 in ~100 ms instead of ~350 ms
// cell by cell. It must be asked for explicitly: left to choose it by itself, plotly.js
// 4 also sets a style attribute (image-rendering) that the CSP refuses; app.css sets
// `image-rendering: pixelated` on heatmap images instead, so the cells stay sharp.
const cells = (rows, cols) => (rows > 32 || cols > 32
  ? { xgap: 0, ygap: 0, zsmooth: 'fast' } : { xgap: 1, ygap: 1 });

/**
 * Our own colour bar: a one-column heatmap on a second axis. plotly.js's colorbar writes
 * style="" on its rects, which the CSP refuses (a console error on every draw).
 */
function colourBar(c) {
  const n = 64;
  const values = Array.from({ length: n }, (_, i) => c.zmin + ((c.zmax - c.zmin) * i) / (n - 1));
  return { type: 'heatmap', x: [0], y: values, z: values.map((v) => [v]), xaxis: 'x2',
    yaxis: 'y2', colorscale: c.colorscale, zmin: c.zmin, zmax: c.zmax, showscale: false,
    xgap: 0.01, hovertemplate: 'colour scale %{y:.4g}<extra></extra>' };
}

const BAR_AXES = {
  xaxis2: { domain: [0.955, 0.985], anchor: 'y2', visible: false, fixedrange: true },
  // exponents as "1e+20": plotly.js draws 10²⁰ with a style attribute, which the CSP refuses
  yaxis2: { domain: [0, 1], anchor: 'x2', side: 'right', fixedrange: true, showgrid: false,
    zeroline: false, ticks: 'outside', tickfont: { size: 10 }, exponentformat: 'e' },
};

function highlightShapes(row, cols) {
  if (row === null || row === undefined || row < 0) return [];
  return [{ type: 'rect', xref: 'x', yref: 'y', x0: -0.5, x1: cols - 0.5, y0: row - 0.5,
    y1: row + 0.5, line: { color: '#d4006a', width: 3 }, fillcolor: 'rgba(0,0,0,0)' }];
}

/**
 * Draw one heatmap. spec: {z (rows of numbers, NaN = gap), xLabels, yLabels (escaped),
 * xTitle, yTitle, kind ('sequential' | 'diverging'), range {min, max}, customdata,
 * hovertemplate (fixed text, no user strings), highlightRow, height}.
 */
export function heatmap(el, spec) {
  const cols = spec.xLabels.length;
  const c = colours(spec.kind, spec.range);
  const trace = { type: 'heatmap', z: spec.z, customdata: spec.customdata,
    hovertemplate: spec.hovertemplate, hoverongaps: false,
    ...cells(spec.yLabels.length, cols), showscale: false, ...c };
  const layout = {
    margin: { l: 90, r: 50, t: 10, b: 90 },
    height: spec.height,
    ...BAR_AXES,
    xaxis: { title: { text: spec.xTitle }, domain: [0, 0.92], showgrid: false,
      zeroline: false, ...ticks(spec.xLabels) },
    yaxis: { title: { text: spec.yTitle }, autorange: 'reversed', showgrid: false, zeroline: false,
      ...ticks(spec.yLabels, 'y') },
    shapes: highlightShapes(spec.highlightRow, cols),
    plot_bgcolor: '#8c8c8c',
    paper_bgcolor: 'rgba(0,0,0,0)',
    uirevision: spec.uirevision,
  };
  return Plotly().react(el, [trace, colourBar(c)], layout, CONFIG);
}

/** A small, static α heatmap for the head grid. */
export function thumbnail(el, z, range) {
  const trace = { type: 'heatmap', z, showscale: false, hoverinfo: 'skip',
    ...cells(z.length, z[0].length), ...colours('sequential', range) };
  const layout = { margin: { l: 2, r: 2, t: 2, b: 2 }, height: 120, width: 120,
    xaxis: { visible: false }, yaxis: { visible: false, autorange: 'reversed' } };
  return Plotly().react(el, [trace], layout, { staticPlot: true, displaylogo: false });
}

/** Move the highlighted query row without redrawing the heatmap. */
export function highlight(el, row, cols) {
  if (!el.data) return Promise.resolve();
  return Plotly().relayout(el, { shapes: highlightShapes(row, cols) });
}

/** Line chart: series [{x, y, name, dash}], axis titles fixed text. */
export function lines(el, series, xTitle, yTitle, yType = 'linear') {
  const traces = series.map((s) => ({ type: 'scatter', mode: 'lines+markers', x: s.x, y: s.y,
    name: s.name, line: { dash: s.dash || 'solid' } }));
  const layout = { height: 300, margin: { l: 60, r: 20, t: 10, b: 50 },
    xaxis: { title: { text: xTitle }, type: 'log' }, yaxis: { title: { text: yTitle }, type: yType },
    legend: { orientation: 'h', y: -0.25 } };
  return Plotly().react(el, traces, layout, CONFIG);
}

/** Call back with {row, col} when the pointer is over / clicks a cell. */
export function onCell(el, event, callback) {
  el.on(`plotly_${event}`, (e) => {
    const p = e && e.points && e.points.find((q) => q.curveNumber === 0);
    if (p) callback({ row: Math.round(p.y), col: Math.round(p.x) });
  });
}

/**
 * The figure to export: heatmaps drawn cell by cell. On screen a large heatmap is one
 * scaled-up image kept sharp by CSS, which an exported PNG or SVG does not carry, so the
 * export would come out blurred.
 */
function exportFigure(el) {
  const data = el.data.map((t) => (t.zsmooth === 'fast'
    ? { ...t, zsmooth: false, xgap: 0.01, ygap: 0.01 } : t));
  return { data, layout: el.layout };
}

/** Save the figure as PNG or SVG through plotly.js's own exporter. */
export function download(el, format, filename) {
  return Plotly().downloadImage(exportFigure(el), { format, filename,
    width: el.clientWidth || 800, height: el.clientHeight || 600 });
}

/** The figure as a data URL (used by the tests and for copying an image). */
export function image(el, format) {
  return Plotly().toImage(exportFigure(el), { format, width: el.clientWidth || 800,
    height: el.clientHeight || 600 });
}
