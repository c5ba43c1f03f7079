"""Every endpoint of JSON API v1, checked the way a client would read it."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest

from app.attention.registry import MECHANISMS
from app.inputs.presets import preset_ids


def test_health(client):
    r = client.get("/api/v1/health")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


def test_mechanisms_come_from_the_registry(client):
    r = client.get("/api/v1/mechanisms")
    assert r.status_code == 200
    listed = {m["id"]: m for m in r.json()}
    assert list(listed) == list(MECHANISMS)
    for m in listed.values():
        assert {"id", "title", "description", "parameters", "steps", "weights"} <= set(m)
        assert m["steps"][0]["id"] == "x" and m["steps"][-1]["id"] == "output"
        assert all(s["description"] for s in m["steps"])


def test_multi_head_listing_has_defaults_steps_and_symbolic_weights(client):
    mh = next(m for m in client.get("/api/v1/mechanisms").json() if m["id"] == "multi_head")
    params = {p["name"]: p for p in mh["parameters"]}
    assert params["heads"]["default"] == 2
    assert params["scale"]["default"] == "sqrt_dk" and params["scale"]["accepts_number"]
    assert params["mask"]["choices"] == ["none", "causal"]
    assert [s["id"] for s in mh["steps"]] == ["x", "q", "k", "v", "scores", "scaled", "masked",
                                             "weights", "weighted", "heads_concat", "output"]
    weights = {w["name"]: w for w in mh["weights"]}
    assert weights["W_q"]["dims"] == ["d_model", "h·d_k"]
    assert weights["W_q"]["shape"] == "d_model × h·d_k"
    assert weights["W_o"]["dims"] == ["h·d_v", "d_model"]
    assert weights["W_q"]["condition"] is None
    assert weights["b_q"]["condition"] == "bias = true"  # only with bias on


def test_weights_switched_off_by_an_option_say_when_they_are_used(client):
    mhs = next(m for m in client.get("/api/v1/mechanisms").json()
               if m["id"] == "multi_head_shared")
    weights = {w["name"]: w for w in mhs["weights"]}
    assert weights["W_q"]["condition"] == "projections = true"
    assert weights["W_o"]["condition"] is None


def test_presets_list_and_each_one(client):
    listed = client.get("/api/v1/presets").json()
    assert [p["id"] for p in listed] == preset_ids()
    for p in listed:
        one = client.get(f"/api/v1/presets/{p['id']}")
        assert one.status_code == 200
        assert one.json() == p


@pytest.mark.parametrize("preset", preset_ids())
def test_every_preset_runs_as_it_is(client, preset):
    request = client.get(f"/api/v1/presets/{preset}").json()["request"]
    r = client.post("/api/v1/attention", json=request)
    assert r.status_code == 200, r.text
    assert r.json()["mechanism"] == request["mechanism"]


def test_unknown_preset_is_404(client):
    r = client.get("/api/v1/presets/nope")
    assert r.status_code == 404
    assert "nope" in r.json()["detail"]


def test_attention_response_shapes_and_invariants(client, mh_request):
    r = client.post("/api/v1/attention", json=mh_request())
    assert r.status_code == 200
    body = r.json()
    assert body["mechanism"] == "multi_head"
    assert body["query_tokens"] == ["I", "saw", "a", "saw"]
    assert body["key_tokens"] == ["I", "saw", "a", "saw"]
    alpha = np.array(body["attention"])
    assert alpha.shape == (2, 4, 4)  # [heads][n_query][n_key]
    np.testing.assert_allclose(alpha.sum(-1), 1.0, atol=1e-12)
    assert np.all(np.triu(alpha, k=1) == 0)  # causal: nothing above the diagonal
    assert np.array(body["output"]).shape == (4, 8)
    ids = [s["id"] for s in body["steps"]]
    assert ids == ["x", "q", "k", "v", "scores", "scaled", "masked", "weights", "weighted",
                   "heads_concat", "output"]
    for step in body["steps"]:
        assert {"id", "title", "formula", "shape", "axes", "data", "note"} <= set(step)
        assert len(step["axes"]) == len(step["shape"])
        data = np.array(step["data"], dtype=float)
        assert list(data.shape) == step["shape"]
    weights = next(s for s in body["steps"] if s["id"] == "weights")
    assert weights["data"] == body["attention"]


def test_masked_cells_with_fill_minus_inf_are_null(client, mh_request):
    body = client.post("/api/v1/attention", json=mh_request()).json()
    masked = next(s for s in body["steps"] if s["id"] == "masked")["data"]
    assert masked[0][0][1] is None  # query 1 may not see key 2: −∞, written as null
    assert isinstance(masked[0][1][0], float)


def _decode(typed):
    assert typed["dtype"] == "f4"
    raw = base64.b64decode(typed["bdata"])
    return np.frombuffer(raw, dtype="<f4").reshape(typed["shape"])


def test_typed_encoding_decodes_to_the_plain_numbers(client, mh_request):
    plain = client.post("/api/v1/attention", json=mh_request()).json()
    typed = client.post("/api/v1/attention?encoding=typed", json=mh_request()).json()
    assert typed["query_tokens"] == plain["query_tokens"]
    for p, t in zip(plain["steps"], typed["steps"], strict=True):
        assert p["id"] == t["id"] and t["data"]["shape"] == p["shape"]
        want = np.array(p["data"], dtype=float)  # null -> nan
        got = _decode(t["data"]).astype(float)
        got[np.isneginf(got)] = np.nan  # −∞ in float32 is null in plain JSON
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
    np.testing.assert_allclose(_decode(typed["attention"]), plain["attention"], atol=1e-7)
    np.testing.assert_allclose(_decode(typed["output"]), plain["output"], rtol=1e-6,
                               atol=1e-6)


def test_unknown_encoding_is_422(client, mh_request):
    r = client.post("/api/v1/attention?encoding=xml", json=mh_request())
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["query", "encoding"]


def test_pasted_text_equals_nested_lists(client):
    x = [[1, 0, 1, 1], [0, 2, 0, 2], [1, 1, 1, 1]]
    w_q = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]
    base = {"mechanism": "scaled_dot_product", "options": {"d_k": 3, "scale": "none"}}
    as_lists = {**base, "query": {"matrix": x}, "weights": {"W_q": w_q}}
    as_text = {**base, "query": {"matrix": "1,0,1,1\n0,2,0,2\n1,1,1,1"},
               "weights": {"W_q": "array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]])"}}
    a = client.post("/api/v1/attention", json=as_lists)
    b = client.post("/api/v1/attention", json=as_text)
    assert a.status_code == b.status_code == 200, (a.text, b.text)
    assert a.json()["attention"] == b.json()["attention"]
    assert a.json()["query_tokens"] == ["x1", "x2", "x3"]
    q = next(s for s in a.json()["steps"] if s["id"] == "q")["data"]
    np.testing.assert_allclose(q[0], np.array(x) @ np.array(w_q))  # Q = X·W_q, head 1


def test_cross_attention_has_key_tokens(client):
    r = client.post("/api/v1/attention", json={
        "mechanism": "additive", "query": {"text": "汤姆 追逐 杰瑞"},
        "key": {"text": "Tom chase Jerry <pad>"}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["key_tokens"] == ["Tom", "chase", "Jerry", "<pad>"]
    assert np.array(body["attention"]).shape == (1, 3, 4)
    assert body["steps"][1]["id"] == "x_kv"


def test_fully_masked_row_has_a_note_not_nan(client):
    r = client.post("/api/v1/attention", json={
        "mechanism": "scaled_dot_product", "query": {"text": "a b c"},
        "options": {"mask": [[0, 0, 0], [1, 1, 0], [1, 1, 1]]}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["attention"][0][0] == [0.0, 0.0, 0.0]
    assert any("every key masked" in n for n in body["notes"])


def test_plotly_js_is_served_from_the_package_with_long_cache(client):
    r = client.get("/static/vendor/plotly.min.js")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/javascript")
    assert "max-age=31536000" in r.headers["cache-control"]
    assert len(r.content) > 1_000_000


def test_openapi_and_docs(client):
    spec = client.get("/openapi.json").json()
    for path in ("/api/v1/health", "/api/v1/mechanisms", "/api/v1/presets",
                 "/api/v1/presets/{preset_id}", "/api/v1/attention", "/api/v1/shares",
                 "/api/v1/shares/{share_id}"):
        assert path in spec["paths"], path
    docs = client.get("/docs")
    assert docs.status_code == 200


def test_docs_load_swagger_ui_from_this_server_not_a_cdn(client):
    """The interactive API docs must work offline: every script and style is local."""
    html = client.get("/docs").text
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets and all(a.startswith("/") for a in assets), assets
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    assert "cdn" not in html.lower()


def test_the_seed_in_weights_as_design_shows_it_draws_the_same_weights(client):
    """DESIGN's example request carries ``"weights": {"seed": 0, ...}``."""
    base = {"mechanism": "multi_head", "query": {"text": "I saw a saw"}}
    inside = client.post("/api/v1/attention", json={**base, "weights": {"seed": 5,
                                                                         "W_q": None}})
    top = client.post("/api/v1/attention", json={**base, "seed": 5})
    other = client.post("/api/v1/attention", json={**base, "seed": 6})
    assert inside.status_code == top.status_code == 200
    assert inside.json()["attention"] == top.json()["attention"]
    assert inside.json()["attention"] != other.json()["attention"]
    both = client.post("/api/v1/attention", json={**base, "seed": 1, "weights": {"seed": 2}})
    assert both.status_code == 422
    assert both.json()["detail"][0]["msg"].startswith("weights.seed: expected the same seed")


def test_the_response_carries_sizes_the_weights_used_and_the_mask(client):
    body = {"mechanism": "multi_head", "query": {"text": "the cat sat"}, "seed": 4,
            "options": {"heads": 2, "mask": "causal"}}
    r = client.post("/api/v1/attention", json=body).json()
    assert r["sizes"]["d_model"] == 8 and r["sizes"]["h"] == 2 and r["sizes"]["d_k"] == 4
    assert set(r["weights"]) == {"W_q", "W_k", "W_v", "W_o"}
    assert np.array(r["weights"]["W_q"]).shape == (8, 8)
    assert r["mask"] == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    # the weights returned reproduce the run when given back, whatever the seed
    again = client.post("/api/v1/attention", json={**body, "seed": 99,
                                                   "weights": r["weights"]}).json()
    assert np.allclose(again["attention"], r["attention"], atol=0, rtol=1e-12)
    typed = client.post("/api/v1/attention?encoding=typed", json=body).json()
    w_q = typed["weights"]["W_q"]
    got = np.frombuffer(base64.b64decode(w_q["bdata"]), "<f4").reshape(w_q["shape"])
    assert np.allclose(got, r["weights"]["W_q"], atol=1e-6)
    assert typed["mask"] == r["mask"]


def test_typed_values_beyond_float32_come_as_float64_not_infinity(client):
    body = {"mechanism": "scaled_dot_product", "query": {"matrix": [[1e30, 0], [0, -1e20]]},
            "weights": {"W_q": [[1, 0], [0, 1]], "W_k": [[1, 0], [0, 1]],
                        "W_v": [[1, 0], [0, 1]]}, "options": {"scale": "none"}}
    typed = client.post("/api/v1/attention?encoding=typed", json=body).json()
    scores = next(s["data"] for s in typed["steps"] if s["id"] == "scores")
    assert scores["dtype"] == "f8"
    values = np.frombuffer(base64.b64decode(scores["bdata"]), "<f8")
    assert values[0] == pytest.approx(1e60, rel=1e-12) and np.isfinite(values).all()
    x = next(s["data"] for s in typed["steps"] if s["id"] == "x")
    assert x["dtype"] == "f4"  # 1e30 fits float32: no need for f8
