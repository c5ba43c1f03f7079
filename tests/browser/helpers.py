"""What a user does and reads on the page, as small functions the tests share."""

from __future__ import annotations

import math
import time

from playwright.sync_api import Page

READY = "#viewer[data-state=ready]"
#: The step's heatmap (the colour bar is a second, one-column heatmap on axes x2/y2).
HEATMAP = "#step-plot g.subplot.xy g.hm image"


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(READY)


def go_to_step(page: Page, step_id: str) -> None:
    page.click(f'#step-list button[data-step-id="{step_id}"]')
    page.wait_for_selector(f'#viewer[data-step-id="{step_id}"][data-state=ready]')


def choose_preset(page: Page, preset_id: str) -> None:
    draws = int(page.get_attribute("#viewer", "data-draws") or 0)
    page.select_option("#preset", preset_id)
    page.wait_for_function(
        "n => Number(document.querySelector('#viewer').dataset.draws) > n "
        "&& document.querySelector('#viewer').dataset.state === 'ready'", arg=draws)


def read_table(page: Page) -> dict:
    """The values table of the current step as a user reads it: labels and numbers."""
    if not page.evaluate("document.getElementById('values-details').open"):
        page.click("#values-details summary")
    page.wait_for_selector("#values-table")
    return page.evaluate("""() => {
      const t = document.getElementById('values-table');
      const cols = [...t.querySelectorAll('thead th')].slice(1).map(th => th.textContent);
      const rows = [...t.querySelectorAll('tbody tr')];
      return {
        caption: t.querySelector('caption').textContent,
        cols,
        rows: rows.map(r => r.querySelector('th').textContent),
        values: rows.map(r => [...r.querySelectorAll('td')].map(td => td.textContent)),
      };
    }""")


def numbers(table: dict) -> list[list[float]]:
    def num(text: str) -> float:
        return -math.inf if text == "−∞" else float(text)

    return [[num(v) for v in row] for row in table["values"]]


def close(a: list[list[float]], b: list[list[float]], tol: float = 1e-5) -> bool:
    return (len(a) == len(b) and all(len(r) == len(s) for r, s in zip(a, b, strict=True))
            and all(math.isclose(x, y, abs_tol=tol, rel_tol=1e-5)
                    for r, s in zip(a, b, strict=True) for x, y in zip(r, s, strict=True)))


def wait_for_alpha(page: Page, expected: list[list[float]], timeout: float = 15) -> list:
    """Poll the α table until it shows `expected` (the page recomputes as the user types)."""
    deadline = time.monotonic() + timeout
    seen: list = []
    while time.monotonic() < deadline:
        page.wait_for_selector(READY)
        if page.get_attribute("#viewer", "data-step-id") != "weights":
            go_to_step(page, "weights")
        seen = numbers(read_table(page))
        if close(seen, expected):
            return seen
        time.sleep(0.3)
    raise AssertionError(f"α on the page {seen} != API {expected}")


def tick_texts(page: Page, axis: str) -> list[str]:
    """Tick labels of the step heatmap's x or y axis, as drawn."""
    return page.evaluate(
        f"() => [...document.querySelectorAll('#step-plot .{axis}tick text')]"
        ".map(t => t.textContent)")


def wait_status(page: Page, prefix: str) -> None:
    """Wait until the form's status line (what a user reads after a run) starts with `prefix`,
    and the new result is drawn."""
    page.wait_for_function(
        "p => document.querySelector('#run-status').textContent.startsWith(p)", arg=prefix)
    page.wait_for_selector(READY)


def click_cell(page: Page, row: int, col: int, rows: int, cols: int) -> str:
    """Click cell (row, col) of the step heatmap (0-based) and return the cell inspector's text."""
    box = page.locator("#step-plot .nsewdrag[data-subplot=xy]").bounding_box()
    page.mouse.click(box["x"] + box["width"] * (col + 0.5) / cols,
                     box["y"] + box["height"] * (row + 0.5) / rows)
    page.wait_for_function("() => !document.querySelector('#cell-info .hint')")
    return page.inner_text("#cell-info")


def plotted_z(page: Page) -> list[list[float | None]]:
    """The numbers Plotly draws for the step heatmap (null = a gap: a masked cell)."""
    return page.evaluate("""() => document.getElementById('step-plot').data[0].z
      .map(r => Array.from(r, v => Number.isNaN(v) ? null : v))""")


def rerun(page: Page, action, prefix: str = "") -> None:
    """Do `action` (a change to the form) and wait for the new result to be drawn."""
    draws = int(page.get_attribute("#viewer", "data-draws") or 0)
    action()
    page.wait_for_function(
        "n => Number(document.querySelector('#viewer').dataset.draws) > n "
        "&& document.querySelector('#viewer').dataset.state === 'ready'", arg=draws)
    wait_status(page, prefix)
