"""The pretrained-model page: type a sentence, see the layer × head grid, open a head, read α."""

from __future__ import annotations

from .conftest import api
from .helpers import close, numbers, read_table

OVERVIEW_READY = "#model-overview[data-state=ready]"
SENTENCE = "My <b>dog</b> chased the ball because it was bored."


def head_ready(layer: int, head: int) -> str:
    return f"#model-head[data-state=ready][data-layer='{layer}'][data-head='{head}']"


def test_type_a_sentence_open_a_head_and_read_its_alpha(page, server):
    page.goto(server + "/model")
    page.wait_for_selector(OVERVIEW_READY)
    oracle = api(server, "/api/v1/models/minilm-l6/attention",
                 {"text": SENTENCE, "layer": 2, "head": 5})
    n = len(oracle["tokens"])

    page.fill("#model-text", SENTENCE)
    page.click("#model-run")
    page.wait_for_selector(f"#model-overview[data-state=ready][data-tokens='{n}']")
    assert page.get_attribute("#model-grid", "data-cells") == "72"
    assert page.locator("#model-grid button.cell canvas").count() == 72
    label = page.get_attribute("#model-grid button[data-layer='2'][data-head='5']", "aria-label")
    assert label.startswith("Layer 2, head 5: entropy")
    assert page.locator("#rollout-plot g.subplot.xy g.hm image").count() == 1

    # click a head: its α heatmap, head view and real steps open; α reads as the API's
    page.click("#model-grid button[data-layer='2'][data-head='5']")
    page.wait_for_selector(head_ready(2, 5))
    page.wait_for_selector("#viewer[data-state=ready][data-step-id=weights]")
    assert page.get_attribute("#model-grid button[data-layer='2'][data-head='5']",
                              "aria-pressed") == "true"
    table = read_table(page)
    assert len(table["rows"]) == n and table["rows"][0].endswith("[CLS]")
    assert close(numbers(table), oracle["attention"][0], tol=1e-5)
    steps = page.eval_on_selector_all("#step-list button", "bs => bs.map(b => b.dataset.stepId)")
    assert steps[:4] == ["x", "q", "k", "v"] and "weights" in steps
    # the tokens "<", "b", ">" are text on the page, never markup
    assert page.locator("#head-view b, #model-page b").count() == 0
    assert "<" in oracle["tokens"] and "<" in page.inner_text("#head-view").split("\n")

    # hover a token in the head view: lines to the tokens it attends to
    page.hover("#head-view text[data-side=left][data-index='3']")
    lines = int(page.get_attribute("#head-view svg", "data-lines"))
    assert 1 <= lines <= n

    # the head slider moves to another head of the same layer
    page.fill("#head-slider", "7")
    page.dispatch_event("#head-slider", "input")
    page.wait_for_selector(head_ready(2, 7))
    assert page.inner_text("#head-value") == "7"
    assert page.watch.errors == []
    assert page.watch.outside == []


def test_too_long_text_says_so_at_the_text_field(page, server):
    page.goto(server + "/model")
    page.wait_for_selector(OVERVIEW_READY)
    page.fill("#model-text", "word " * 600)
    page.click("#model-run")
    error = page.locator("[data-error-for=text]")
    error.wait_for(state="visible")
    assert "at most 512 tokens" in error.inner_text() and "602 tokens" in error.inner_text()
    page.check("#model-truncate")
    page.click("#model-run")
    page.wait_for_selector("#model-overview[data-state=ready][data-tokens='512']")
    assert "cut from 602" in page.inner_text("#model-status")
    # the full 512 × 512 head is drawn: one heatmap image, one head-view row per token
    page.wait_for_selector(head_ready(0, 0))
    assert page.locator("#alpha-plot g.subplot.xy g.hm image").count() == 1
    assert page.locator("#head-view text[data-side=left]").count() == 512
    # the only console errors are Chromium's notes of the two 422s above (overview + head)
    assert all("status of 422" in e for e in page.watch.errors), page.watch.errors
