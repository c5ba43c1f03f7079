"""Security headers, CSP nonce, CORS, settings and the command line."""

from __future__ import annotations

import re

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.testclient import TestClient

from app import cli
from app.config import Settings
from app.main import create_app


def with_page(settings):
    """The app plus a bare HTML page that writes the nonce it was given."""
    app = create_app(settings)

    @app.get("/test-page", response_class=HTMLResponse)
    def page(request: Request):
        return f'<style nonce="{request.state.csp_nonce}"></style>'

    return TestClient(app)


def test_json_responses_have_nosniff_no_referrer_and_a_csp_that_loads_nothing(client):
    r = client.get("/api/v1/health")
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert r.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"


def test_html_pages_get_a_strict_csp_with_a_fresh_nonce(settings):
    client = with_page(settings)
    nonces = []
    for _ in range(2):
        r = client.get("/test-page")
        csp = r.headers["content-security-policy"]
        assert "script-src 'self';" in csp and "unsafe-inline" not in csp
        assert "object-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert "img-src 'self' data: blob:" in csp
        nonce = re.search(r"'nonce-([A-Za-z0-9_-]+)'", csp).group(1)
        assert f'nonce="{nonce}"' in r.text  # the template saw the same nonce
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"
        nonces.append(nonce)
    assert nonces[0] != nonces[1]
    assert len(nonces[0]) >= 20


def test_no_cors_by_default(client):
    r = client.get("/api/v1/health", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers
    r = client.options("/api/v1/attention", headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in r.headers


def test_cors_only_for_configured_origins(db_url):
    s = Settings(database_url=db_url, cors_origins=["https://ok.example"], _env_file=None)
    client = TestClient(create_app(s))
    ok = client.get("/api/v1/health", headers={"Origin": "https://ok.example"})
    assert ok.headers["access-control-allow-origin"] == "https://ok.example"
    other = client.get("/api/v1/health", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers


def test_settings_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNSCOPE_MAX_TOKENS", "7")
    monkeypatch.setenv("ATTNSCOPE_CORS_ORIGINS", "https://a.example, https://b.example")
    monkeypatch.setenv("ATTNSCOPE_DATABASE_URL", f"sqlite:///{tmp_path}/x.db")
    s = Settings(_env_file=None)
    assert s.max_tokens == 7
    assert s.cors_origins == ["https://a.example", "https://b.example"]
    assert s.database_url.endswith("/x.db")


def test_default_database_is_in_the_git_ignored_data_dir(monkeypatch):
    monkeypatch.delenv("ATTNSCOPE_DATABASE_URL", raising=False)
    url = Settings(_env_file=None).database_url
    assert url.startswith("sqlite:///") and url.endswith("/data/attnscope.db")


def test_cli_serve_runs_uvicorn_on_the_factory(monkeypatch):
    calls = []
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda target, **kw: calls.append((target, kw)))
    cli.main(["serve"])
    cli.main(["serve", "--host", "0.0.0.0", "--port", "9001", "--reload"])
    assert calls[0] == ("app.main:create_app", {"factory": True, "host": "127.0.0.1",
                                                "port": 8000, "reload": False,
                                                "log_level": "info"})
    assert calls[1][1]["host"] == "0.0.0.0" and calls[1][1]["port"] == 9001
    assert calls[1][1]["reload"] is True


def test_importing_main_is_light():
    import subprocess
    import sys

    code = ("import sys, app.main; "
            "print(any(m == 'torch' or m.startswith('torch.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"  # torch, the store and the routers load in create_app only
