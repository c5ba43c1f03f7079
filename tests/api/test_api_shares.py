"""Shares: round trip, immutability, restart, concurrency, ids."""

from __future__ import annotations

import base64
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from fastapi.testclient import TestClient

import app.attention.weights as weights_module
from app.main import create_app
from app.store import StoreConfigError, new_share_id, store_from_url


def share(client, request, **extra):
    r = client.post("/api/v1/shares", json={"request": request, **extra})
    assert r.status_code == 201, r.text[:500]
    return r.json()


def test_share_round_trip(client, mh_request):
    created = share(client, mh_request())
    assert created["url"] == f"/s/{created['id']}"
    got = client.get(f"/api/v1/shares/{created['id']}")
    assert got.status_code == 200
    body = got.json()
    assert body["id"] == created["id"] and body["kind"] == "attention"
    assert body["request"]["mechanism"] == "multi_head"
    assert body["request"]["options"] == {"heads": 2, "mask": "causal"}
    assert body["created_at"].endswith("Z")
    live = client.post("/api/v1/attention", json=mh_request()).json()
    assert body["result"] == live  # exact float64, nulls for −∞ included


def test_shared_request_can_be_posted_again(client, mh_request):
    created = share(client, mh_request())
    stored = client.get(f"/api/v1/shares/{created['id']}").json()["request"]
    assert client.post("/api/v1/attention", json=stored).status_code == 200


def test_share_in_typed_encoding(client, mh_request):
    created = share(client, mh_request())
    plain = client.get(f"/api/v1/shares/{created['id']}").json()["result"]
    typed = client.get(f"/api/v1/shares/{created['id']}?encoding=typed").json()["result"]
    a = typed["attention"]
    assert a["dtype"] == "f4" and a["shape"] == [2, 4, 4]
    got = np.frombuffer(base64.b64decode(a["bdata"]), "<f4").reshape(a["shape"])
    np.testing.assert_allclose(got, plain["attention"], atol=1e-7)


def test_share_shows_what_was_computed_even_if_draws_change(client, mh_request, monkeypatch):
    created = share(client, mh_request())
    before = client.get(f"/api/v1/shares/{created['id']}").json()["result"]
    original = weights_module.draw
    monkeypatch.setattr(weights_module, "draw", lambda *a: original(*a) * 2 + 1)
    now = client.post("/api/v1/attention", json=mh_request()).json()
    assert now["output"] != before["output"]  # a "new version" draws differently
    after = client.get(f"/api/v1/shares/{created['id']}").json()["result"]
    assert after == before


def test_bad_share_request_is_422_under_request(client, mh_request):
    r = client.post("/api/v1/shares", json={"request": mh_request(options={"heads": 3})})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "request", "options", "heads"]
    r = client.post("/api/v1/shares", json={"request": {"mechanism": "multi_head"}})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "request", "query"]


def test_unknown_kind_is_422(client, mh_request):
    r = client.post("/api/v1/shares", json={"request": mh_request(), "kind": "figure"})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "kind"]


def test_restart_keeps_every_share(settings, mh_request):
    with TestClient(create_app(settings)) as first:
        ids = [share(first, mh_request(seed=i))["id"] for i in range(5)]
        before = [first.get(f"/api/v1/shares/{i}").json() for i in ids]
    with TestClient(create_app(settings)) as second:
        after = [second.get(f"/api/v1/shares/{i}").json() for i in ids]
    assert after == before


def test_fifty_concurrent_creates_are_all_readable(client, mh_request):
    def create(i):
        r = client.post("/api/v1/shares", json={"request": mh_request(seed=i)})
        return r.status_code, r.json()["id"]

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(create, range(50)))
    assert all(status == 201 for status, _ in results)
    ids = [i for _, i in results]
    assert len(set(ids)) == 50
    for n, share_id in enumerate(ids):
        got = client.get(f"/api/v1/shares/{share_id}").json()
        assert got["request"]["seed"] == n
    assert client.app.state.store.count() == 50


def test_update_is_refused_by_the_database(client, settings, mh_request):
    share_id = share(client, mh_request())["id"]
    path = settings.database_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("UPDATE shares SET request = '{}' WHERE id = ?", (share_id,))
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_ids_are_unique_url_safe_and_128_bits():
    ids = {new_share_id() for _ in range(10_000)}
    assert len(ids) == 10_000
    for i in list(ids)[:100]:
        raw = base64.urlsafe_b64decode(i + "==")
        assert len(raw) * 8 >= 128
        assert set(i) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                             "0123456789-_")


def test_store_urls(tmp_path):
    memory = store_from_url("sqlite:///:memory:")
    share_id = memory.create({"a": 1}, {"b": [1.5]})
    assert memory.get(share_id).result == {"b": [1.5]}
    assert memory.get("missing") is None
    memory.close()
    with pytest.raises(StoreConfigError, match="PostgreSQL is not implemented"):
        store_from_url("postgresql://user:secret@db/attnscope")
    with pytest.raises(StoreConfigError) as err:
        store_from_url("postgresql://user:secret@db/attnscope")
    assert "secret" not in str(err.value)
    with pytest.raises(StoreConfigError, match="not supported"):
        store_from_url("mysql://db/x")
    nested = tmp_path / "a" / "b" / "c.db"
    store_from_url(f"sqlite:///{nested}")
    assert nested.exists()  # the directory is created on first run


def test_an_unknown_share_page_is_a_404(client):
    assert client.get("/s/AAAAAAAAAAAAAAAAAAAAAA").status_code == 404
    assert client.get("/s/not-a-share-id-at-all!").status_code == 404
