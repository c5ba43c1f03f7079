"""Sharing what the model page shows: a head's link opens it read-only, drawn from the
STORED numbers (not recomputed); the page's URL points at a layer and head; user text is
inert on the shared page."""

from __future__ import annotations

import math

import numpy as np
from playwright.sync_api import Page

from app.api.encoding import typed_array
from app.store.sqlite import SQLiteShareStore

from .conftest import api
from .helpers import close, numbers, read_table

OVERVIEW_READY = "#model-overview[data-state=ready]"
SENTENCE = "Grace Hopper found a moth in the relay, and she taped it into the log."
HOSTILE = "<img src=x onerror=alert(1)>"


def head_ready(layer: int, head: int, source: str = "live") -> str:
    return (f"#model-head[data-state=ready][data-source={source}]"
            f"[data-layer='{layer}'][data-head='{head}']")


def alpha_z(page: Page) -> list[list[float]]:
    """The numbers Plotly draws in the head's α heatmap."""
    return page.evaluate("() => Array.from(document.getElementById('alpha-plot').data[0].z, "
                         "r => Array.from(r))")


def test_share_a_head_and_open_it_read_only_in_a_fresh_context(page, browser, server):
    page.goto(server + "/model")
    page.wait_for_selector(OVERVIEW_READY)
    page.fill("#model-text", SENTENCE)
    page.click("#model-run")
    oracle = api(server, "/api/v1/models/minilm-l6/attention",
                 {"text": SENTENCE, "layer": 2, "head": 5, "steps": False})
    n = len(oracle["tokens"])
    page.wait_for_selector(f"#model-overview[data-state=ready][data-tokens='{n}']")
    page.click("#model-grid button[data-layer='2'][data-head='5']")
    page.wait_for_selector(head_ready(2, 5))
    page.wait_for_selector("#viewer[data-state=ready][data-step-id=weights]")
    assert "layer=2" in page.url and "head=5" in page.url  # the URL points at the head
    mine = alpha_z(page)
    assert close(mine, oracle["attention"][0], tol=1e-6)
    table = numbers(read_table(page))

    # the share button is a labelled button a keyboard reaches
    share = page.locator("#share-button")
    assert share.inner_text() == "Share this head"
    share.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#share-url').value.includes('/s/')")
    assert "Link created" in page.inner_text("#share-status")
    url = page.input_value("#share-url")
    assert url.startswith(server + "/s/")
    stored = api(server, "/api/v1/shares/" + url.rsplit("/", 1)[1])
    assert stored["kind"] == "model_attention"
    assert stored["request"]["text"] == SENTENCE
    assert (stored["request"]["layer"], stored["request"]["head"]) == (2, 5)

    fresh = browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        other = fresh.new_page()
        other.set_default_timeout(20_000)
        errors: list[str] = []
        other.on("console", lambda m: m.type == "error" and errors.append(m.text))
        other.on("pageerror", lambda e: errors.append(str(e)))
        other.goto(url)
        other.wait_for_url("**/model?share=*")
        other.wait_for_selector(head_ready(2, 5, "stored"))
        # the same α numbers: the heatmap, and the stored steps' α table
        assert close(alpha_z(other), mine, tol=1e-12)
        other.wait_for_selector("#viewer[data-state=ready][data-step-id=weights]")
        assert close(numbers(read_table(other)), table, tol=1e-9)
        # read-only: the form is locked, the banner says so, the grid is the live one
        other.wait_for_selector(f"#model-overview[data-state=ready][data-tokens='{n}']")
        assert other.is_visible("#model-share-banner")
        assert "read-only" in other.inner_text("#model-share-banner")
        assert other.input_value("#model-text") == SENTENCE
        assert other.get_attribute("#model-text", "readonly") is not None
        assert other.is_disabled("#model-run") and other.is_disabled("#layer-slider")
        cell = "#model-grid button[data-layer='2'][data-head='5']"
        assert other.get_attribute(cell, "aria-pressed") == "true"
        assert other.is_disabled("#model-grid button[data-layer='3'][data-head='1']")
        assert "layer=2" in other.url and "head=5" in other.url
        # "edit a copy" unlocks the form; a new head is then computed live
        other.click("#edit-copy")
        assert not other.is_visible("#model-share-banner")
        assert other.get_attribute("#model-text", "readonly") is None
        assert not other.is_disabled("#model-run")
        assert "share=" not in other.url
        other.click("#model-grid button[data-layer='3'][data-head='1']")
        other.wait_for_selector(head_ready(3, 1))
        assert errors == []
    finally:
        fresh.close()
    assert page.watch.errors == []
    assert page.watch.outside == []


def test_the_url_points_at_a_layer_and_head(page, server):
    page.goto(server + "/model?layer=4&head=9")
    page.wait_for_selector(head_ready(4, 9))
    assert page.inner_text("#layer-value") == "4" and page.inner_text("#head-value") == "9"
    assert page.input_value("#head-slider") == "9"
    page.fill("#head-slider", "2")
    page.dispatch_event("#head-slider", "input")
    page.wait_for_selector(head_ready(4, 2))
    assert page.url.endswith("layer=4&head=2")
    assert page.watch.errors == []


def made_up_alpha(n: int) -> list[list[float]]:
    """A row-stochastic α no model computes: half of each row on the next token."""
    rest = 0.5 / (n - 1)
    return [[0.5 if j == (i + 1) % n else rest for j in range(n)] for i in range(n)]


def test_a_model_share_page_draws_the_stored_alpha_and_keeps_tokens_inert(page, server,
                                                                         share_db):
    request = {"model": "minilm-l6", "text": HOSTILE, "layer": 1, "head": 3,
               "truncate": False, "steps": False}
    result = api(server, "/api/v1/models/minilm-l6/attention",
                 {"text": HOSTILE, "layer": 1, "head": 3, "steps": False})
    n = len(result["tokens"])
    stored = made_up_alpha(n)
    assert not close(stored, result["attention"][0], tol=1e-3)
    result["tokens"][1] = HOSTILE  # a token the server would never make, stored as text
    result["attention"] = typed_array(np.array([stored]), "f8")
    share_id = SQLiteShareStore(share_db).create(request, result, kind="model_attention")

    page.goto(f"{server}/s/{share_id}")
    page.wait_for_selector(head_ready(1, 3, "stored"))
    drawn = alpha_z(page)
    # the page gets float32 typed arrays: the stored numbers to float32's 7 digits
    assert all(math.isclose(x, y, rel_tol=1e-7)
               for r, s in zip(drawn, stored, strict=True) for x, y in zip(r, s, strict=True))
    # the hostile token is text: whole in the summary, clipped in the head view, no <img>
    assert HOSTILE in page.inner_text("#share-summary")
    assert page.text_content("#head-view text[data-side=left][data-index='1']").startswith("<img")
    ticks = page.evaluate("() => [...document.querySelectorAll('#alpha-plot .xtick text')]"
                          ".map(t => t.textContent)")
    assert any(t.startswith("<img src=x") for t in ticks)
    assert page.locator("img").count() == 0
    assert page.input_value("#model-text") == HOSTILE
    # the share stored α without its steps: the step-by-step panel is not offered
    assert page.is_hidden("#steps-details")
    page.wait_for_selector(OVERVIEW_READY)
    assert page.get_attribute("#model-head", "data-source") == "stored"
    assert page.watch.dialogs == []
    assert page.watch.errors == []


def test_an_unknown_model_share_says_so(page, server):
    page.goto(server + "/model?share=doesnotexist123")
    page.wait_for_selector("#share-error:not([hidden])")
    assert "no shared view" in page.inner_text("#share-error")
    # Chromium logs the 404 of GET /api/v1/shares/doesnotexist123 and nothing else
    assert all("status of 404" in e for e in page.watch.errors), page.watch.errors


def test_a_share_of_every_head_of_a_layer_opens_the_head_in_its_link(page, server):
    """A share made through the API with head null holds every head of the layer: the link's
    ?head= picks which, and the head slider moves between the STORED heads only."""
    created = api(server, "/api/v1/shares", {"kind": "model_attention", "request": {
        "model": "minilm-l6", "text": "one two three", "layer": 4, "head": None,
        "steps": False}})
    stored = api(server, f"/api/v1/shares/{created['id']}")["result"]["attention"]
    assert len(stored) == 12
    page.goto(f"{server}{created['url']}?head=7")
    page.wait_for_selector(head_ready(4, 7, "stored"))
    assert close(alpha_z(page), stored[7], tol=1e-6)
    assert page.is_disabled("#layer-slider") and not page.is_disabled("#head-slider")
    page.fill("#head-slider", "2")
    page.dispatch_event("#head-slider", "input")
    page.wait_for_selector(head_ready(4, 2, "stored"))
    assert close(alpha_z(page), stored[2], tol=1e-6)
    assert "head=2" in page.url
    assert page.watch.errors == []
