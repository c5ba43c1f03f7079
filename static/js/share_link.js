// "Create a share link", for every page that shares (the home page, the model page): the
// caller's create() posts the share through api.js and resolves to {url}; the link is
// shown in `output`, selected and copied, and `status` says what happened.

/**
 * Create a link and show it. `carry` names query parameters of this page's URL that the
 * link keeps (e.g. the step and head on screen). Resolves to the absolute link, or null.
 */
export async function shareLink({ create, output, status, carry = [] }) {
  status.textContent = 'Creating the link…';
  try {
    const created = await create();
    const url = new URL(created.url, window.location.origin);
    const here = new URLSearchParams(window.location.search);
    for (const key of carry) if (here.get(key)) url.searchParams.set(key, here.get(key));
    url.hash = '';
    output.hidden = false;
    output.value = url.href;
    output.select();
    try {
      await navigator.clipboard.writeText(url.href);
      status.textContent = 'Link created and copied.';
    } catch {
      status.textContent = 'Link created: copy it from the box.';
    }
    return url.href;
  } catch (err) {
    status.textContent = `Could not create the link: ${err.message}`;
    return null;
  }
}
