// The page's URL reflects the view (step and head), so a link can point at a step:
// /s/<id>?step=weights&head=2 or /?preset=i_saw_a_saw&step=scores.

export function readView() {
  const p = new URLSearchParams(window.location.search);
  const head = Number.parseInt(p.get('head') || '', 10);
  return { step: p.get('step'), head: Number.isFinite(head) && head >= 1 ? head - 1 : null,
    preset: p.get('preset'), copy: p.get('copy') };
}

/** Replace (not push) the query string: stepping should not flood the history. */
export function writeView(changes) {
  const url = new URL(window.location.href);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === '') url.searchParams.delete(key);
    else url.searchParams.set(key, String(value));
  }
  if (url.href !== window.location.href) window.history.replaceState(null, '', url);
}
