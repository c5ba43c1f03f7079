// User text (tokens, labels) on its way to the screen.
// Plotly treats text as pseudo-HTML (<b>, <br>, <a href>, style=), so every user string is
// escaped before it reaches Plotly; in the DOM we only ever set textContent.
// Bidi overrides and zero-width characters are shown as visible markers, so a shared link
// cannot reorder or hide what its labels say.

const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2060-\u2069\u061C\uFEFF]/g;

/** "a\u202Eb" -> "a⟦U+202E⟧b": what the token really contains, every character visible. */
export function visible(token) {
  return String(token).replace(INVISIBLE, (ch) =>
    `⟦U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟧`);
}

/** Escape &, <, > so Plotly draws the text literally. */
export function escapePlotly(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Shorten a label for an axis tick (the hover and the table keep it whole). */
export function clip(text, max = 14) {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/** A token as an axis tick: markers for invisible characters, clipped, escaped for Plotly. */
export function tickLabel(token) {
  return escapePlotly(clip(visible(token)));
}

/** "#2 saw": position and token, as hover and tables show them. */
export function numbered(token, i) {
  return `#${i + 1} ${visible(token)}`;
}

/** A DOM element with text content only (never innerHTML). */
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  if (className) node.className = className;
  return node;
}
