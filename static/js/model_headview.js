// The head view: tokens in two columns (queries left, keys right); pointing at a token draws
// lines to the tokens it attends to (or, on the right, from the tokens that attend to it),
// each line's opacity its α. SVG built with createElementNS and textContent only.

import { clip, visible } from './text.js';

const SVG = 'http://www.w3.org/2000/svg';
const ROW = 16;
const WIDTH = 360;
const LEFT = 110;
const RIGHT = WIDTH - 110;

function node(tag, attrs) {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  return n;
}

/** Draw the head view of α (a slice2d of [n, n]) for `tokens` into `container`. */
export function drawHeadView(container, tokens, alpha) {
  const n = tokens.length;
  const svg = node('svg', { width: WIDTH, height: ROW * n + 8, role: 'img',
    'aria-label': `Head view: ${n} tokens; point at a token to see its attention` });
  const lines = node('g', {});
  svg.append(lines);
  const labels = { left: [], right: [] };
  const label = (side, i) => {
    const t = node('text', { x: side === 'left' ? LEFT - 6 : RIGHT + 6, y: ROW * i + ROW,
      'text-anchor': side === 'left' ? 'end' : 'start' });
    t.textContent = clip(visible(tokens[i]), 14);
    t.dataset.index = String(i);
    t.dataset.side = side;
    labels[side].push(t);
    svg.append(t);
    t.addEventListener('mouseenter', () => show(side, i));
    t.addEventListener('mouseleave', () => show(null, -1));
  };
  const show = (side, i) => {
    lines.replaceChildren();
    for (const t of [...labels.left, ...labels.right]) t.classList.remove('on');
    if (side === null) return;
    labels[side][i].classList.add('on');
    for (let j = 0; j < n; j += 1) {
      const a = side === 'left' ? alpha.get(i, j) : alpha.get(j, i);
      if (!(a > 0.005)) continue;
      const [q, k] = side === 'left' ? [i, j] : [j, i];
      lines.append(node('line', { x1: LEFT, y1: ROW * q + ROW - 4, x2: RIGHT,
        y2: ROW * k + ROW - 4, 'stroke-width': 2, 'stroke-opacity': Math.min(1, a).toFixed(3) }));
    }
    svg.dataset.lines = String(lines.childElementCount);
  };
  for (let i = 0; i < n; i += 1) {
    label('left', i);
    label('right', i);
  }
  container.replaceChildren(svg);
  return { show };
}
