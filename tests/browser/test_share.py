"""Share links and hostile tokens: a shared view reads back the same numbers, read-only;
tokens are text everywhere (axis labels, hover, tables, the share page)."""

from __future__ import annotations

from .conftest import api
from .helpers import (
    HEATMAP,
    READY,
    choose_preset,
    close,
    go_to_step,
    numbers,
    open_page,
    read_table,
    tick_texts,
)

HOSTILE = ['<img src=x onerror=alert(1)>', '<a href="https://x">x</a>', "<b>bold</b>"]


def create_share(page) -> str:
    page.click("#share-button")
    page.wait_for_selector("#share-url:not([hidden])")
    page.wait_for_function("() => document.querySelector('#share-url').value.includes('/s/')")
    assert "Link created" in page.inner_text("#share-status")
    return page.input_value("#share-url")


def test_share_round_trip_in_a_fresh_context(page, browser, server):
    open_page(page, server + "/")
    choose_preset(page, "causal_multi_head")
    go_to_step(page, "weights")
    mine = numbers(read_table(page))
    url = create_share(page)
    assert url.startswith(server + "/s/")
    fresh = browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        other = fresh.new_page()
        errors = []
        other.on("console", lambda m: m.type == "error" and errors.append(m.text))
        open_page(other, url)
        go_to_step(other, "weights")
        assert close(numbers(read_table(other)), mine)
        # read-only: no inputs, and a way to edit a copy
        assert other.locator("#run-form").count() == 0
        assert "read-only" in other.inner_text(".share-banner")
        # the URL points at a step and head
        assert "?step=weights" in url  # the link opens the step that was on screen
        open_page(other, url.split("?")[0] + "?step=scores&head=2")
        assert other.get_attribute("#viewer", "data-step-id") == "scores"
        assert other.get_attribute("#viewer", "data-head") == "1"
        # "edit a copy" opens the home page with that request loaded
        other.click("#edit-copy")
        other.wait_for_selector(READY)
        assert other.locator("#run-form").count() == 1
        assert other.input_value("#query-text") == "the cat sat on the mat"
        go_to_step(other, "weights")
        assert close(numbers(read_table(other)), mine)
        assert errors == []
    finally:
        fresh.close()


def test_share_page_shows_the_stored_result(page, server):
    """The share page draws the stored numbers: GET /api/v1/shares/{id} is its JSON twin."""
    preset = api(server, "/api/v1/presets/seed004_worked_example")
    created = api(server, "/api/v1/shares", {"request": preset["request"]})
    stored = api(server, f"/api/v1/shares/{created['id']}")
    open_page(page, server + created["url"])
    go_to_step(page, "weights")
    assert close(numbers(read_table(page)), stored["result"]["attention"][0])


def test_unknown_share_says_so(page, server):
    page.goto(server + "/s/doesnotexist123")
    page.wait_for_selector("#viewer-error:not([hidden])")
    assert "no shared view" in page.inner_text("#viewer-error")


def check_inert(page) -> None:
    """The hostile tokens are text: shown literally, nothing created, nothing run."""
    assert page.watch.dialogs == []
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("document.querySelectorAll('#app a[href=\"https://x\"]').length") == 0
    assert page.evaluate("document.querySelectorAll('#step-plot a').length") == 0
    go_to_step(page, "weights")
    table = read_table(page)
    assert table["rows"] == [f"#{i + 1} {t}" for i, t in enumerate(HOSTILE)]
    ticks = tick_texts(page, "y")
    # long tokens are cut for the axis (whole in hover and table), never interpreted
    assert ticks[0] == "<img src=x on…" and ticks[1] == '<a href="http…'
    assert ticks[2] == "<b>bold</b>"
    # bold markup in a token is not applied by Plotly
    assert page.evaluate(
        "[...document.querySelectorAll('#step-plot .ytick tspan')]"
        ".filter(t => (t.getAttribute('style') || '').includes('bold')).length") == 0
    # hover shows the token literally (customdata, not markup)
    box = page.locator("#step-plot .nsewdrag[data-subplot=xy]").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 6, box["y"] + box["height"] / 6)
    page.wait_for_selector("#step-plot .hoverlayer .hovertext")
    hover = page.evaluate("document.querySelector('#step-plot .hoverlayer').textContent")
    assert "#1 <img src=x onerror=alert(1)>" in hover
    assert page.locator("#step-plot .hoverlayer a").count() == 0
    assert "<img src=x onerror=alert(1)>" in page.inner_text("#cell-info")
    assert page.watch.dialogs == []
    assert page.watch.errors == []


def test_hostile_tokens_are_inert_on_home_and_share_page(page, server):
    open_page(page, server + "/?preset=i_saw_a_saw")
    page.check("input[name=query-mode][value=tokens]")
    page.fill("#query-text", "\n".join(HOSTILE))
    page.wait_for_function("() => document.querySelector('#run-status').textContent"
                           ".startsWith('3 query')")
    page.wait_for_selector(READY)
    check_inert(page)
    url = create_share(page)
    open_page(page, url)
    assert page.locator(HEATMAP).count() == 1
    check_inert(page)
    summary = page.inner_text("#share-summary")
    assert HOSTILE[0] in summary and HOSTILE[2] in summary


def test_bidi_and_zero_width_characters_are_shown(page, server):
    open_page(page, server + "/?preset=i_saw_a_saw")
    page.check("input[name=query-mode][value=tokens]")
    page.fill("#query-text", "abc\u202edef\nzero\u200bwidth")
    page.wait_for_function("() => document.querySelector('#run-status').textContent"
                           ".startsWith('2 query')")
    go_to_step(page, "weights")
    assert read_table(page)["rows"] == ["#1 abc⟦U+202E⟧def", "#2 zero⟦U+200B⟧width"]
