"""Exports: PNG and SVG of a heatmap, a step as CSV, the result as JSON, copy as curl."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import shlex
import struct
import subprocess

from .conftest import api
from .helpers import HEATMAP, choose_preset, go_to_step, open_page, rerun


def download(page, button: str):
    with page.expect_download() as info:
        page.click(button)
    d = info.value
    return d.suggested_filename, open(d.path(), "rb").read()


def test_png_and_svg_downloads(page, server):
    open_page(page, server + "/")
    name, data = download(page, "#export-png")
    assert name.endswith(".png")
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    name, data = download(page, "#export-svg")
    assert name.endswith(".svg") and b"<svg" in data[:500]
    assert page.watch.errors == []


def test_step_csv_parses_back_to_the_same_numbers(page, server):
    open_page(page, server + "/?preset=causal_multi_head")
    go_to_step(page, "weights")
    name, data = download(page, "#export-csv")
    assert name.endswith(".csv")
    rows = list(csv.reader(io.StringIO(data.decode())))
    assert rows[0][:2] == ["head", "query"] and rows[0][2:] == [
        "1:the", "2:cat", "3:sat", "4:on", "5:the", "6:mat"]
    preset = api(server, "/api/v1/presets/causal_multi_head")
    want = api(server, "/api/v1/attention", preset["request"])["attention"]
    got = [[float(v) for v in r[2:]] for r in rows[1:]]
    flat_want = [row for head in want for row in head]
    assert len(got) == len(flat_want) == 12
    # exactly the API's float64 numbers, not a float32 rounding of them
    assert got == flat_want
    assert page.watch.errors == []


def test_signed_step_csv_is_exact_and_masked_cells_say_minus_inf(page, server):
    """Q has negative numbers (no spreadsheet-formula guard on numbers); the masked step's
    −∞ cells (null in the plain JSON) are written as -inf."""
    open_page(page, server + "/?preset=causal_multi_head")
    preset = api(server, "/api/v1/presets/causal_multi_head")
    plain = api(server, "/api/v1/attention", preset["request"])
    steps = {s["id"]: s["data"] for s in plain["steps"]}
    go_to_step(page, "q")
    _, data = download(page, "#export-csv")
    rows = list(csv.reader(io.StringIO(data.decode())))[1:]
    assert [[float(v) for v in r[2:]] for r in rows] == [r for h in steps["q"] for r in h]
    assert any(v.startswith("-") for r in rows for v in r[2:])
    go_to_step(page, "masked")
    _, data = download(page, "#export-csv")
    rows = list(csv.reader(io.StringIO(data.decode())))[1:]
    want = [["-inf" if v is None else v for v in r] for h in steps["masked"] for r in h]
    assert [[v if v == "-inf" else float(v) for v in r[2:]] for r in rows] == want


def test_result_json_and_curl_reproduce_the_view(page, server):
    open_page(page, server + "/?preset=seed004_worked_example")
    name, data = download(page, "#export-json")
    saved = json.loads(data)
    assert saved["result"]["query_tokens"] == ["input 1", "input 2", "input 3"]
    page.click("#export-curl")
    page.wait_for_selector("#curl-text:not([hidden])")
    command = page.inner_text("#curl-text")
    assert command.startswith(f"curl -X POST {server}/api/v1/attention ")
    out = subprocess.run(shlex.split(command) + ["-s"], capture_output=True, timeout=30,
                         check=True)
    result = json.loads(out.stdout)
    # the saved JSON is the API's plain result, number for number (and so is curl's)
    assert saved["result"]["attention"] == result["attention"]
    assert saved["result"]["steps"] == result["steps"]
    assert saved["result"]["weights"] == result["weights"]
    assert saved["request"]["mechanism"] == "scaled_dot_product"


def png_width(data_url: str) -> int:
    """The pixel width of a base64 PNG data URL, read from its IHDR chunk."""
    raw = base64.b64decode(data_url.split(",", 1)[1])
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">I", raw[16:20])[0]


def test_a_large_heatmap_is_sharp_on_screen_and_in_the_export(page, server):
    """Above 32 tokens the page draws one pixel per cell, scaled up and kept sharp by CSS;
    an exported image has no CSS, so it must be drawn cell by cell at full resolution."""
    open_page(page, server + "/")
    choose_preset(page, "causal_multi_head")
    rerun(page, lambda: page.fill("#query-text", " ".join(f"w{i}" for i in range(64))))
    go_to_step(page, "weights")
    on_screen = page.get_attribute(HEATMAP, "href")
    assert png_width(on_screen) == 64  # one pixel per key: the fast path
    rendering = page.evaluate(f"getComputedStyle(document.querySelector('{HEATMAP}'))"
                              ".imageRendering")
    assert rendering == "pixelated"
    name, data = download(page, "#export-svg")
    images = re.findall(rb'href="(data:image/png;base64,[^"]+)"', data)
    widths = [png_width(i.decode()) for i in images]
    assert max(widths) > 64 * 4, widths  # the exported heatmap is drawn at screen size
    assert page.watch.errors == []
