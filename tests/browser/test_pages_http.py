"""The pages and the √d_k experiment through the real app carry the security headers, and a
share page draws the STORED result, not a recomputation."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.api.encoding import typed_array
from app.config import Settings
from app.main import create_app
from app.store.sqlite import SQLiteShareStore

from .conftest import api
from .helpers import close, go_to_step, numbers, open_page, read_table


@pytest.fixture(scope="module")
def client(tmp_path_factory) -> TestClient:
    db = tmp_path_factory.mktemp("http") / "shares.db"
    return TestClient(create_app(Settings(database_url=f"sqlite:///{db}")))


def check_headers(response) -> None:
    """The page CSP (scripts from this server only, no inline code), nosniff, no-referrer."""
    csp = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in csp and "default-src 'self'" in csp
    assert "object-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_home_and_share_page_carry_the_security_headers(client):
    home = client.get("/")
    assert home.status_code == 200
    check_headers(home)
    created = client.post("/api/v1/shares", json={"request": {
        "mechanism": "scaled_dot_product", "query": {"text": "a b c"}}})
    assert created.status_code == 201
    page = client.get(created.json()["url"])
    assert page.status_code == 200 and created.json()["id"] in page.text
    check_headers(page)
    missing = client.get("/s/not-a-share-id!")
    assert missing.status_code == 404
    check_headers(missing)


def test_the_sqrt_dk_experiment_json_carries_the_security_headers(client):
    """A JSON response opened directly must not be framed or run anything: a CSP such as
    OWASP's "default-src 'none'; frame-ancestors 'none'" besides nosniff and no-referrer."""
    experiment = client.get("/api/v1/experiments/sqrt-dk")
    assert experiment.status_code == 200 and experiment.json()["dims"]
    assert experiment.headers["x-content-type-options"] == "nosniff"
    assert experiment.headers["referrer-policy"] == "no-referrer"
    csp = experiment.headers.get("content-security-policy", "")
    assert "frame-ancestors 'none'" in csp and ("default-src 'none'" in csp
                                               or "default-src 'self'" in csp)


def test_the_html_has_no_inline_script_and_a_nonce_for_plotly(client):
    response = client.get("/")
    nonce = response.headers["content-security-policy"].split("'nonce-")[1].split("'")[0]
    assert f'<style id="plotly.js-style-global" nonce="{nonce}">' in response.text
    assert "<script>" not in response.text.replace(" ", "")


def test_share_page_draws_the_stored_alpha_not_a_recomputation(page, server, share_db):
    """A share whose stored α differs from what running its request gives: the page must
    show the stored numbers (the link keeps what was shared, whatever a later version does)."""
    request = {"mechanism": "scaled_dot_product", "query": {"text": "one two three"}}
    result = api(server, "/api/v1/attention", request)
    recomputed = result["attention"][0]
    stored = [[0.5, 0.25, 0.25], [0.125, 0.75, 0.125], [0.0625, 0.0625, 0.875]]
    assert not close(stored, recomputed)
    alpha = np.array([stored])
    result["attention"] = typed_array(alpha, "f8")
    for step in result["steps"]:
        if step["id"] == "weights":
            step["data"] = typed_array(alpha, "f8")
    share_id = SQLiteShareStore(share_db).create(request, result, kind="attention")
    open_page(page, f"{server}/s/{share_id}")
    go_to_step(page, "weights")
    assert numbers(read_table(page)) == stored
    assert page.watch.errors == []
