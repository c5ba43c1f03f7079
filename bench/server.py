"""The one way the benchmarks start attnscope: uvicorn in a subprocess on a free
127.0.0.1 port with a share database of its own, returned once /api/v1/health answers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(db: Path, env: dict[str, str] | None = None,
          timeout: float = 60.0) -> tuple[subprocess.Popen, str]:
    """(the server process, its base URL); `env` adds ATTNSCOPE_* settings."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory", "--host",
         "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"],
        cwd=ROOT, env={**os.environ, "ATTNSCOPE_DATABASE_URL": f"sqlite:///{db}", **(env or {})})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/api/v1/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")
