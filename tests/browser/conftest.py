"""Real-browser tests: the real app under uvicorn, driven by Debian's Chromium.

A session fixture starts ``uvicorn app.main:create_app --factory`` in a subprocess on a free
port of 127.0.0.1 with a temporary share database (ATTNSCOPE_DATABASE_URL). Chromium is
/usr/bin/chromium (CHROMIUM env to override): when it is missing the tests FAIL, they never
skip, so CI cannot pass without a browser. Screenshots go to test-output/ (git-ignored).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "test-output"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
READY = "#viewer[data-state=ready]"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/api/v1/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer on {url} within {timeout} s")


@pytest.fixture(scope="session")
def share_db(tmp_path_factory) -> Path:
    """The server's SQLite share database (tests may write a share into it directly)."""
    return tmp_path_factory.mktemp("db") / "shares.db"


@pytest.fixture(scope="session")
def server(tmp_path_factory, share_db) -> str:
    """Base URL of a real attnscope server with an empty temporary share database."""
    db = share_db
    port = free_port()
    env = {**os.environ, "ATTNSCOPE_DATABASE_URL": f"sqlite:///{db}"}
    log = open(tmp_path_factory.mktemp("log") / "server.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory", "--host",
         "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def browser() -> Browser:
    """Headless Chromium. A missing binary is a failure, not a skip."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install it (apt-get install chromium) "
                    "or set CHROMIUM; the browser tests must not be skipped")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


class Watch:
    """What a page did that a user should never see: console errors, page errors, dialogs,
    requests to anywhere but the server."""

    def __init__(self, page: Page, server: str):
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.outside: list[str] = []
        host = urlparse(server).netloc
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

        def on_dialog(d):
            self.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", on_dialog)

        def on_request(r):
            u = urlparse(r.url)
            if u.scheme in ("data", "blob"):
                return
            if u.netloc != host:
                self.outside.append(r.url)

        page.on("request", on_request)


@pytest.fixture
def context(browser: Browser):
    ctx = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context, server) -> Page:
    p = context.new_page()
    p.set_default_timeout(20_000)
    p.watch = Watch(p, server)
    return p


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT


def api(server: str, path: str, body: dict | None = None) -> dict | list:
    """Call the JSON API directly (the oracle the page is compared with)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server + path, data=data,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())
