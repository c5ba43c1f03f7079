"""Browser timings: navigation → first heatmap drawn, and one step switch, at 16, 64 and
256 tokens, in headless Chromium against a real server.

    python bench/browser.py [--runs 3] [--tokens 16 64 256]

What is measured (median of --runs, milliseconds, from the page's own clock):
- ``home cold``: a new browser context (empty cache) opens ``/?copy=<share>``: load the page
  and plotly.js (4.8 MB), fetch the mechanism list, presets and the shared request, POST
  /api/v1/attention?encoding=typed, draw the heatmap;
- ``home warm``: the same again in that context (plotly.js from the HTTP cache);
- ``share``: open ``/s/<share>``: the stored result, drawn (no compute);
- ``step``: press "Next" (α → output) until that heatmap is drawn.
The request is multi-head attention, 2 heads, d_model 16, on N distinct tokens. The
baseline is the same page at 4 tokens, measured in the same run; ratios are against it.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
BASELINE = 4

# Records performance.now() each time the viewer reaches data-state="ready".
MARKS = """
window.__ready = [];
new MutationObserver((records) => {
  for (const r of records) {
    if (r.target.id === 'viewer' && r.target.dataset.state === 'ready') {
      window.__ready.push(performance.now());
    }
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-state'] });
"""

STEP = """() => new Promise((resolve) => {
  const box = document.getElementById('viewer');
  const before = window.__ready.length;
  const t0 = performance.now();
  const poll = () => (window.__ready.length > before ? resolve(window.__ready[before] - t0)
    : requestAnimationFrame(poll));
  document.getElementById('step-prev').click();
  poll();
})"""


def start_server(db: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "ATTNSCOPE_DATABASE_URL": f"sqlite:///{db}"}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory",
                             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/api/v1/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def share(url: str, n: int) -> str:
    request = {"mechanism": "multi_head", "query": {"tokens": [f"t{i}" for i in range(n)]},
               "embedding": {"kind": "hashed", "dim": 16, "seed": 0, "positions": "none"},
               "options": {"heads": 2}}
    req = urllib.request.Request(url + "/api/v1/shares", json.dumps({"request": request}).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())["id"]


def first_draw(page, url: str) -> float:
    page.goto(url)
    page.wait_for_function("() => window.__ready && window.__ready.length > 0", timeout=120_000)
    return page.evaluate("window.__ready[0]")


def measure(browser, url: str, share_id: str, runs: int) -> dict[str, float]:
    out: dict[str, list[float]] = {"cold": [], "warm": [], "share": [], "step": []}
    for _ in range(runs):
        ctx = browser.new_context(viewport={"width": 1366, "height": 768})
        page = ctx.new_page()
        page.add_init_script(MARKS)
        out["cold"].append(first_draw(page, f"{url}/?copy={share_id}"))
        out["warm"].append(first_draw(page, f"{url}/?copy={share_id}"))
        out["share"].append(first_draw(page, f"{url}/s/{share_id}"))
        out["step"].append(page.evaluate(STEP))
        ctx.close()
    return {k: statistics.median(v) for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, nargs="+", default=[16, 64, 256])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp) / "bench.db")
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
                ids = {n: share(url, n) for n in [BASELINE, *args.tokens]}
                measure(browser, url, ids[BASELINE], 1)  # warm-up: caches, JIT
                base = measure(browser, url, ids[BASELINE], args.runs)
                print(f"browser: multi_head, 2 heads, d_model 16; median of {args.runs} runs, ms "
                      f"(× = ratio to {BASELINE} tokens)")
                print(f"{'tokens':>6} {'home cold':>18} {'home warm':>18} {'share page':>18} "
                      f"{'step switch':>18}")
                for n in [BASELINE, *args.tokens]:
                    r = base if n == BASELINE else measure(browser, url, ids[n], args.runs)
                    cells = [f"{r[k]:8.0f} ({r[k] / base[k]:4.1f}×)"
                             for k in ("cold", "warm", "share", "step")]
                    print(f"{n:>6} " + " ".join(f"{c:>18}" for c in cells))
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
