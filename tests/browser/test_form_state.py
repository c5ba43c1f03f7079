"""The form keeps what the user set: the 0/1 mask grid follows the number of tokens, "edit a
copy" restores every setting (seed, pasted mask, the exact weights used), and a share link
opens the step and head that were on screen."""

from __future__ import annotations

import json

from .conftest import api
from .helpers import (
    READY,
    close,
    go_to_step,
    numbers,
    open_page,
    read_table,
    rerun,
    wait_status,
)


def grid(page) -> list[list[int]]:
    return page.evaluate("""() => [...document.querySelectorAll('#mask-grid tr')].slice(1)
      .map(tr => [...tr.querySelectorAll('button')].map(b => Number(b.textContent)))""")


def test_the_mask_grid_follows_the_token_count_and_keeps_its_cells(page, server):
    open_page(page, server + "/?preset=i_saw_a_saw")
    page.select_option("#mask-kind", "grid")
    page.wait_for_selector("#mask-grid button")
    assert grid(page) == [[1] * 4] * 4
    rerun(page, lambda: page.click('#mask-grid button[aria-label^="query 1 may attend to key 2 "]'),
          "4 query")
    # one more token: the next run sends a 5 × 5 grid, not the old 4 × 4 one
    rerun(page, lambda: page.fill("#query-text", "I saw a saw today"))
    assert page.inner_text("#run-status").startswith("5 query")
    assert page.locator("[data-error-for]:not([hidden])").count() == 0
    g = grid(page)
    assert len(g) == 5 and all(len(r) == 5 for r in g)
    assert g[0] == [1, 0, 1, 1, 1] and all(v == 1 for r in g[1:] for v in r)
    go_to_step(page, "weights")
    alpha = numbers(read_table(page))
    assert len(alpha) == 5 and alpha[0][1] == 0 and alpha[0][0] > 0
    # fewer tokens: the grid shrinks, the cell that still fits keeps its 0
    rerun(page, lambda: page.fill("#query-text", "I saw"), "2 query")
    assert grid(page) == [[1, 0], [1, 1]]
    assert page.watch.errors == []


def test_the_grid_sizes_the_key_side_for_cross_attention(page, server):
    open_page(page, server + "/?preset=i_saw_a_saw")
    page.check("#cross")
    page.fill("#key-text", "one two three")
    wait_status(page, "4 query × 3 key")
    page.select_option("#mask-kind", "grid")
    page.wait_for_selector("#mask-grid button")
    assert [len(r) for r in grid(page)] == [3, 3, 3, 3]
    rerun(page, lambda: page.fill("#key-text", "one two three four five six"))
    assert page.inner_text("#run-status").startswith("4 query × 6 key")
    assert [len(r) for r in grid(page)] == [6, 6, 6, 6]
    assert page.locator("[data-error-for]:not([hidden])").count() == 0


def test_edit_a_copy_keeps_the_seed_the_pasted_mask_and_the_exact_weights(page, server):
    request = {"mechanism": "scaled_dot_product", "query": {"text": "a b c"},
               "weights": {"seed": 7}, "options": {"mask": "1 0 0\n1 1 0\n1 1 1"}}
    created = api(server, "/api/v1/shares", {"request": request})
    stored = api(server, f"/api/v1/shares/{created['id']}")
    open_page(page, f"{server}/?copy={created['id']}")
    assert page.input_value("#weights-seed") == "7"
    assert page.input_value("#mask-kind") == "grid"
    assert grid(page) == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    # the weights that were used are in the boxes, to the last bit
    for name in ("W_q", "W_k", "W_v"):
        assert json.loads(page.input_value(f"#weight-{name}")) == stored["result"]["weights"][name]
    go_to_step(page, "weights")
    assert close(numbers(read_table(page)), stored["result"]["attention"][0])
    assert page.locator("[data-error-for]:not([hidden])").count() == 0
    assert page.watch.errors == []


def test_the_share_link_opens_the_step_and_head_on_screen(page, browser, server):
    open_page(page, server + "/?preset=causal_multi_head")
    go_to_step(page, "scores")
    page.select_option("#head-select", "1")
    page.wait_for_selector('#viewer[data-head="1"][data-state=ready]')
    page.click("#share-button")
    page.wait_for_function("() => document.querySelector('#share-url').value.includes('/s/')")
    url = page.input_value("#share-url")
    assert "step=scores" in url and "head=2" in url
    fresh = browser.new_context()
    try:
        other = fresh.new_page()
        other.goto(url)
        other.wait_for_selector(READY)
        assert other.get_attribute("#viewer", "data-step-id") == "scores"
        assert other.get_attribute("#viewer", "data-head") == "1"
    finally:
        fresh.close()
