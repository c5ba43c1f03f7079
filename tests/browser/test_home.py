"""The home page: first view, pasted weights, errors, stepping, heads, layouts."""

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
    wait_for_alpha,
)

SEED004_X = "[[1,0,1,1],[0,2,0,2],[1,1,1,1]]"
SEED004_W = {"W_q": "[[1,0,1],[1,0,0],[0,0,1],[0,1,1]]",
             "W_k": "[[0,0,1],[1,1,0],[0,1,0],[1,1,0]]",
             "W_v": "[[0,2,0],[0,3,0],[1,0,3],[1,1,0]]"}


def test_home_draws_the_example_with_no_errors_and_nothing_leaves_localhost(page, server):
    open_page(page, server + "/")
    # a first-time visitor sees α at once: a heatmap, its title, its numbers
    assert page.get_attribute("#viewer", "data-step-id") == "weights"
    assert page.locator(HEATMAP).count() == 1
    assert "α" in page.inner_text("#step-title")
    alpha = numbers(read_table(page))
    assert alpha and all(abs(sum(row) - 1) < 1e-4 for row in alpha)
    page.wait_for_selector("#head-grid[data-drawn='1']")
    assert page.watch.errors == []
    assert page.watch.outside == []
    # the page ran under the CSP, with plotly.js from this server
    response = page.request.get(server + "/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert page.evaluate("typeof window.Plotly") == "object"


def test_pasted_seed004_weights_show_the_apis_alpha(page, server):
    open_page(page, server + "/?preset=i_saw_a_saw")
    page.select_option("#mechanism", "scaled_dot_product")
    page.check("input[name=query-mode][value=matrix]")
    page.fill("#query-text", SEED004_X)
    page.fill("#query-labels", "")
    page.fill("#opt-d_k", "3")
    page.select_option("#opt-scale", "none")
    for name, text in SEED004_W.items():
        page.fill(f"#weight-{name}", text)
    expected = api(server, "/api/v1/attention", {
        "mechanism": "scaled_dot_product", "query": {"matrix": SEED004_X},
        "weights": SEED004_W, "options": {"d_k": 3, "scale": "none"}})["attention"][0]
    wait_for_alpha(page, expected)
    assert page.locator("[data-error-for]:not([hidden])").count() == 0
    # the weight label now says the shape in numbers and in symbols
    assert "4 × 3 = d_model × d_k" in page.inner_text("label[for=weight-W_q]")
    # hovering α_ij explains it: the score, its exp, the row's sum
    page.click("#step-plot .nsewdrag[data-subplot=xy]", position={"x": 10, "y": 10})
    info = page.inner_text("#cell-info")
    assert "exp(s_ij − m_i)" in info and "row's sum" in info
    assert page.watch.errors == []


def test_a_bad_paste_shows_its_error_by_its_box_and_keeps_the_text(page, server):
    open_page(page, server + "/")
    box = "#weight-W_q"
    error = '[data-error-for="weights.W_q"]'
    bad = "[[1, 0, 1],\n [1, 0, oops]]"
    page.fill(box, bad)
    page.wait_for_selector(f"{error}:not([hidden])")
    text = page.inner_text(error)
    assert "W_q" in text and "row 2" in text
    assert page.input_value(box) == bad
    assert page.get_attribute(box, "aria-invalid") == "true"
    # a wrong shape names what was expected and what came
    page.fill(box, "[[1, 2], [3, 4]]")
    page.wait_for_function(
        "() => document.querySelector('[data-error-for=\"weights.W_q\"]')"
        ".textContent.includes('2 × 2')")
    text = page.inner_text(error)
    assert "expected 4 × 3" in text and "got 2 × 2" in text
    assert page.input_value(box) == "[[1, 2], [3, 4]]"
    # the last good result stays drawn
    assert page.locator(HEATMAP).count() == 1


def test_keyboard_steps_through_every_step(page, server):
    open_page(page, server + "/?preset=causal_multi_head")
    ids = page.eval_on_selector_all("#step-list button", "bs => bs.map(b => b.dataset.stepId)")
    assert ids[0] == "x" and "weights" in ids and ids[-1] == "output"
    go_to_step(page, "x")
    page.focus("#step-next")
    seen = ["x"]
    for expected in ids[1:]:
        page.keyboard.press("ArrowRight")
        page.wait_for_selector(f'#viewer[data-step-id="{expected}"][data-state=ready]')
        assert page.locator(HEATMAP).count() == 1
        assert page.inner_text("#step-title")
        seen.append(expected)
    assert seen == ids
    assert f"step={ids[-1]}" in page.url
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector(f'#viewer[data-step-id="{ids[-2]}"][data-state=ready]')
    assert page.watch.errors == []


def test_the_head_grid_focuses_a_head(page, server):
    open_page(page, server + "/?preset=causal_multi_head")
    page.wait_for_selector("#head-grid[data-drawn='2']")
    go_to_step(page, "scores")
    page.click("#head-grid button[data-head='1']")
    page.wait_for_selector('#viewer[data-head="1"][data-state=ready]')
    assert page.get_attribute("#head-grid button[data-head='1']", "aria-pressed") == "true"
    assert "head=2" in page.url
    preset = api(server, "/api/v1/presets/causal_multi_head")
    want = api(server, "/api/v1/attention", preset["request"])
    go_to_step(page, "weights")
    table = read_table(page)
    assert "head 2" in table["caption"]
    assert close(numbers(table), want["attention"][1])
    # causal: α is lower triangular
    assert all(v == 0 for i, row in enumerate(numbers(table)) for v in row[i + 1:])


def test_i_saw_a_saw_draws_four_by_four(page, server):
    open_page(page, server + "/")
    choose_preset(page, "i_saw_a_saw")
    go_to_step(page, "weights")
    assert tick_texts(page, "y") == ["I", "saw", "a", "saw"]
    assert tick_texts(page, "x") == ["I", "saw", "a", "saw"]
    table = read_table(page)
    assert table["rows"] == ["#1 I", "#2 saw", "#3 a", "#4 saw"]
    alpha = numbers(table)
    assert len(alpha) == 4 and all(len(r) == 4 for r in alpha)
    assert alpha[1] == alpha[3]  # no positions: both "saw"s have the same row


def test_why_sqrt_dk_panel_draws_the_experiment(page, server):
    open_page(page, server + "/")
    page.click("#sqrt-dk summary")
    page.wait_for_selector("#sqrt-dk[data-drawn=true]")
    assert page.locator("#sqrt-dk-std .scatterlayer .trace").count() == 3
    assert page.locator("#sqrt-dk-max .scatterlayer .trace").count() == 3
    assert page.watch.errors == []


def test_screenshots_at_desktop_and_phone_width(browser, server, output_dir):
    for name, size in (("desktop", {"width": 1366, "height": 768}),
                       ("phone", {"width": 390, "height": 844})):
        ctx = browser.new_context(viewport=size)
        page = ctx.new_page()
        try:
            open_page(page, server + "/")
            page.wait_for_selector(READY)
            path = output_dir / f"home-{name}.png"
            page.screenshot(path=str(path), full_page=True)
            assert path.stat().st_size > 10_000
            # nothing wider than the screen: no sideways scrolling on a phone
            assert page.evaluate("document.documentElement.scrollWidth") <= size["width"] + 1
        finally:
            ctx.close()
