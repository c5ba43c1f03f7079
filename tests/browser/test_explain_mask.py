"""What a cell's hover says and which cells are gaps: the Q_ij explanation is shown only when
it recomputes the value from the weights the API says were used; masked cells come from the
API's explicit mask, never from a cell's value; weight labels take the API's sizes."""

from __future__ import annotations

import math
import re

from .conftest import api
from .helpers import click_cell, go_to_step, open_page, plotted_z, rerun, wait_status

ENDING = re.compile(r"= (-?[\d.]+(?:e[-+]?\d+)?)\.$")


def use_mechanism(page, mechanism: str) -> None:
    rerun(page, lambda: page.select_option("#mechanism", mechanism), "4 query")


def test_shared_projection_hover_names_the_heads_slice_and_recomputes(page, server):
    open_page(page, server + "/?preset=i_saw_a_saw")
    use_mechanism(page, "multi_head_shared")
    go_to_step(page, "q")
    page.select_option("#head-select", "1")
    page.wait_for_selector('#viewer[data-head="1"][data-state=ready]')
    info = click_cell(page, 0, 0, 4, 4)
    line = next(ln for ln in info.splitlines() if ln.startswith("Q_ij ="))
    assert line.startswith("Q_ij = features 5–8 of row 1 of X (head 2's slice) · column 1 of W_q")
    # the number it ends with is X[0, 4:8] · W_q[:, 0] from the API's own numbers
    preset = api(server, "/api/v1/presets/i_saw_a_saw")
    result = api(server, "/api/v1/attention", {**preset["request"],
                                               "mechanism": "multi_head_shared"})
    x = next(s for s in result["steps"] if s["id"] == "x")["data"][0]
    w = result["weights"]["W_q"]
    want = sum(x[4 + t] * w[t][0] for t in range(4))
    q = next(s for s in result["steps"] if s["id"] == "q")["data"][1][0][0]
    assert math.isclose(want, q, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(float(ENDING.search(line).group(1)), want, rel_tol=1e-6, abs_tol=1e-7)
    assert page.watch.errors == []


def test_without_projections_the_hover_claims_no_weight(page, server):
    open_page(page, server + "/?preset=i_saw_a_saw")
    use_mechanism(page, "multi_head_shared")
    rerun(page, lambda: page.uncheck("#opt-projections"), "4 query")
    go_to_step(page, "q")
    info = click_cell(page, 1, 2, 4, 4)
    # the step's own title/note may say "no W_q"; the explanation must not claim one
    assert "of W_q" not in info and "column" not in info
    assert "Q_ij: feature 3 of row 2's projection (see the step's formula)." in info.splitlines()


def test_multi_head_hover_uses_the_wide_weights_column(page, server):
    open_page(page, server + "/?preset=causal_multi_head")
    go_to_step(page, "q")
    page.select_option("#head-select", "1")
    page.wait_for_selector('#viewer[data-head="1"][data-state=ready]')
    info = click_cell(page, 0, 0, 6, 4)
    assert "Q_ij = row 1 of X · column 5 of W_q = " in info


def test_a_real_minus_1e20_input_is_a_number_and_masked_cells_come_from_the_mask(page, server):
    open_page(page, server + "/?preset=i_saw_a_saw")
    page.select_option("#mechanism", "scaled_dot_product")
    page.check("input[name=query-mode][value=matrix]")
    page.fill("#query-text", "[[-1e20, 1], [0, 1], [1, 0]]")
    wait_status(page, "3 query")
    go_to_step(page, "x")
    z = plotted_z(page)
    assert None not in z[0] and math.isclose(z[0][0], -1e20, rel_tol=1e-6)
    # causal: α's upper triangle is a gap (mask[i][j] == 0), its lower triangle numbers
    rerun(page, lambda: page.select_option("#mask-kind", "causal"), "3 query")
    go_to_step(page, "weights")
    z = plotted_z(page)
    assert [[v is None for v in row] for row in z] == [
        [False, True, True], [False, False, True], [False, False, False]]
    go_to_step(page, "masked")
    assert plotted_z(page)[0][1] is None
    go_to_step(page, "scores")
    assert None not in plotted_z(page)[0]
    assert page.watch.errors == []


def test_weight_labels_show_the_apis_sizes(page, server):
    open_page(page, server + "/?preset=i_saw_a_saw")
    use_mechanism(page, "multi_head_shared")
    page.wait_for_function("() => document.querySelector('label[for=weight-W_q]')"
                           ".textContent.includes('head_dim × head_dim')")
    assert "4 × 4 = head_dim × head_dim" in page.inner_text("label[for=weight-W_q]")
    use_mechanism(page, "concat")
    page.wait_for_function("() => document.querySelector('label[for=weight-W_1]')"
                           ".textContent.includes('=')")
    assert "16 × 4 = (d_model+d_kv) × L" in page.inner_text("label[for=weight-W_1]")
