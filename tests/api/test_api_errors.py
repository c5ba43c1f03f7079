"""Every class of bad input gets a 4xx that names the field; none gets a 500 or an echo."""

from __future__ import annotations

import json

import pytest


def post(client, body, **kw):
    return client.post("/api/v1/attention", json=body, **kw)


def only_error(r, status=422):
    assert r.status_code == status, r.text[:500]
    detail = r.json()["detail"]
    assert len(detail) == 1, detail
    return detail[0]


def test_weight_shape_mismatch_names_field_expected_and_got(client, mh_request):
    err = only_error(post(client, mh_request(weights={"W_q": [[0.5] * 8] * 4})))
    assert err["loc"] == ["body", "weights", "W_q"]
    assert err["msg"].startswith("weights.W_q: expected 8 × 8 (d_model × h·d_k")
    assert "for an input with 8 features" in err["msg"]
    assert err["msg"].endswith("got 4 × 8")


def test_heads_that_do_not_divide_d_model(client, mh_request):
    err = only_error(post(client, mh_request(options={"heads": 3})))
    assert err["loc"] == ["body", "options", "heads"]
    assert "divides d_model = 8" in err["msg"] and err["msg"].endswith("got 3")


@pytest.mark.parametrize("raw, loc", [
    (b'{"mechanism": "multi_head", "query": {"matrix": [[1, NaN]]}}',
     ["body", "query", "matrix", 0, 1]),
    (b'{"mechanism": "multi_head", "query": {"text": "a b"}, "weights": '
     b'{"W_q": [[Infinity, 1]]}}', ["body", "weights", "W_q", 0, 0]),
    (b'{"mechanism": "multi_head", "query": {"text": "a b"}, "options": '
     b'{"scale": -Infinity}}', ["body", "options", "scale"]),
    (b'{"mechanism": "multi_head", "query": {"text": "a b"}, "options": '
     b'{"mask": [[1, NaN], [1, 1]]}}', ["body", "options", "mask", 0, 1]),
])
def test_nan_and_infinity_are_rejected_at_their_cell(client, raw, loc):
    r = client.post("/api/v1/attention", content=raw,
                    headers={"content-type": "application/json"})
    err = only_error(r)
    assert err["loc"] == loc
    assert "finite number" in err["msg"]


def test_nan_in_a_paste_is_rejected(client):
    err = only_error(post(client, {"mechanism": "scaled_dot_product",
                                   "query": {"matrix": "1 2\n3 nan"}}))
    assert err["loc"] == ["body", "query", "matrix"]
    assert "row 2, column 2" in err["msg"]


@pytest.mark.parametrize("query, loc, words", [
    ({"text": "   "}, ["body", "query", "text"], "at least one token"),
    ({"tokens": []}, ["body", "query", "tokens"], "at least one token"),
    ({"matrix": []}, ["body", "query", "matrix"], "an empty list"),
    ({"matrix": ""}, ["body", "query", "matrix"], "an empty paste"),
    ({}, ["body", "query"], "one of text, tokens or matrix"),
])
def test_empty_inputs(client, query, loc, words):
    err = only_error(post(client, {"mechanism": "multi_head", "query": query}))
    assert err["loc"] == loc
    assert words in err["msg"]


@pytest.mark.parametrize("mask, words", [
    ("diagonal", "none, causal, or a 0/1 matrix"),
    ([[1, 0], [0, 1]], "expected a 4 × 4 matrix (n_query × n_key) of 0/1, got 2 × 2"),
    ([[2, 1, 1, 1]] * 4, "only 0 (masked) and 1 (may attend), got 2 at row 1, column 1"),
    (7, "a matrix"),
])
def test_wrong_masks(client, mh_request, mask, words):
    err = only_error(post(client, mh_request(options={"heads": 2, "mask": mask})))
    assert err["loc"] == ["body", "options", "mask"]
    assert words in err["msg"]


@pytest.mark.parametrize("mask", ["[[true,false],[true,true]]", "true false\ntrue true",
                                  "[[True, False], [True, True]]"])
def test_masks_of_true_and_false_are_read_as_1_and_0(client, mask):
    r = post(client, {"mechanism": "scaled_dot_product", "query": {"text": "a b"},
                      "options": {"mask": mask}})
    assert r.status_code == 200, r.text[:500]
    assert r.json()["mask"] == [[1, 0], [1, 1]]
    assert r.json()["attention"][0][0][1] == 0.0


@pytest.mark.parametrize("mask", ["causl", "Causal", "diagonal", "", "true-ish"])
def test_a_mask_word_that_is_no_mask_is_a_422_naming_options_mask(client, mask):
    err = only_error(post(client, {"mechanism": "scaled_dot_product",
                                   "query": {"text": "a b"}, "options": {"mask": mask}}))
    assert err["loc"] == ["body", "options", "mask"]
    assert err["msg"].startswith("options.mask: expected ")
    assert err["msg"].endswith(f"got {mask!r}"), err["msg"]


def test_unknown_mechanism_lists_the_known_ones(client, mh_request):
    err = only_error(post(client, mh_request(mechanism="flash")))
    assert err["loc"] == ["body", "mechanism"]
    assert "multi_head" in err["msg"] and "additive" in err["msg"]


def test_option_the_mechanism_does_not_have(client):
    err = only_error(post(client, {"mechanism": "scaled_dot_product",
                                   "query": {"text": "a b"}, "options": {"heads": 2}}))
    assert err["loc"] == ["body", "options", "heads"]
    assert "unknown option 'heads'" in err["msg"]


def test_unknown_keys_are_refused_not_ignored(client, mh_request):
    err = only_error(post(client, {**mh_request(), "option": {"heads": 4}}))
    assert err["loc"] == ["body", "option"]


def test_weight_the_mechanism_does_not_use(client, mh_request):
    err = only_error(post(client, mh_request(weights={"W_z": [[1.0]]})))
    assert err["loc"] == ["body", "weights", "W_z"]
    assert "W_q" in err["msg"]


def test_overflow_is_a_422_not_a_silent_nan(client):
    err = only_error(post(client, {"mechanism": "scaled_dot_product",
                                   "query": {"matrix": [[1e200, 1e200]] * 3}}))
    assert err["loc"][:2] == ["body", "query"]
    assert "finite" in err["msg"]


def test_invalid_json_is_422(client):
    r = client.post("/api/v1/attention", content=b'{"mechanism": ',
                    headers={"content-type": "application/json"})
    err = only_error(r)
    assert err["type"] == "json_invalid" and "JSON decode error" in err["msg"]


def test_unknown_share_is_404(client):
    r = client.get("/api/v1/shares/AAAAAAAAAAAAAAAAAAAAAA")
    assert r.status_code == 404
    assert "not found" in r.json()["detail"]
    assert client.get("/api/v1/shares/" + "x" * 500).status_code == 404


def test_body_over_the_limit_is_413(small_client):
    big = json.dumps({"mechanism": "multi_head", "query": {"text": "a " * 5000}}).encode()
    r = small_client.post("/api/v1/attention", content=big,
                          headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "at most 4096 bytes" in r.json()["detail"]


def test_chunked_body_over_the_limit_is_413(small_client):
    def chunks():
        yield b'{"mechanism": "multi_head", "query": {"text": "'
        for _ in range(10):
            yield b"a " * 500
        yield b'"}}'

    r = small_client.post("/api/v1/attention", content=chunks(),
                          headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert r.json()["detail"].startswith("request body: expected at most 4096 bytes")


@pytest.mark.parametrize("body, loc, words", [
    ({"query": {"text": " ".join("abcdefghij")}}, ["body", "query", "text"],
     "at most 8 tokens, got 10"),
    ({"query": {"tokens": list("abcdefghij")}}, ["body", "query", "tokens"],
     "at most 8 tokens"),
    ({"query": {"text": "a b"}, "key": {"text": " ".join("abcdefghi")}},
     ["body", "key", "text"], "at most 8 tokens, got 9"),
    ({"query": {"matrix": [[1.0] * 17]}}, ["body", "query", "matrix"], "at most 16 columns"),
    ({"query": {"matrix": "1 " * 101}}, ["body", "query", "matrix"], "at most 100 numbers"),
    ({"query": {"text": "a b"}, "embedding": {"dim": 32}}, ["body", "embedding", "dim"],
     "at most 16 features"),
    ({"query": {"text": "a b"}, "options": {"heads": 16}}, ["body", "options", "heads"],
     "at most 8 heads"),
    ({"query": {"text": "a b c d e f g h"}, "options": {"heads": 4}},
     ["body", "options", "heads"], "heads × n_query × n_key"),
    ({"query": {"text": "a b"}, "options": {"d_k": 17}}, ["body", "options", "d_k"],
     "at most 16 features"),
    ({"query": {"text": "a b"}, "options": {"heads": 8, "d_k": 16}},
     ["body", "options", "d_k"], "at most 64 for h·d_k"),
    ({"query": {"text": "a b"}, "weights": {"W_q": [[1.0] * 101]}},
     ["body", "weights", "W_q"], "at most 100 numbers"),
    ({"query": {"text": "a b"}, "weights": {"W_q": "1 " * 101}},
     ["body", "weights", "W_q"], "at most 100 numbers"),
    ({"query": {"matrix": [[1.0] * 13] * 8}}, ["body", "query", "matrix"],
     "at most 100 numbers"),
    ({"query": {"text": "a b"}, "options": {"mask": "1 " * 101}},
     ["body", "options", "mask"], "at most 100 numbers"),
])
def test_limits_are_checked_before_running(small_client, body, loc, words):
    err = only_error(post(small_client, {"mechanism": "multi_head", **body}))
    assert err["loc"] == loc
    assert words in err["msg"], err["msg"]


@pytest.mark.parametrize("body, loc, words", [
    ({"query": {"text": "a b c d e f g h"}, "embedding": {"dim": 16}},
     ["body", "embedding", "dim"], "n_query × n_key × d_a = 8 × 8 × 16"),
    ({"query": {"text": "a b c d e f g h"}, "options": {"d_a": 16}},
     ["body", "options", "d_a"],
     "at most 512 cells"),
])
def test_additive_hidden_layer_is_limited(small_client, body, loc, words):
    err = only_error(post(small_client, {"mechanism": "additive", **body}))
    assert err["loc"] == loc
    assert words in err["msg"], err["msg"]


def test_a_big_bad_body_is_not_echoed(client):
    rows = [[0.25] * 512 for _ in range(200)]
    rows[-1][-1] = "oops"
    r = post(client, {"mechanism": "multi_head", "query": {"matrix": rows}})
    assert r.status_code == 422
    assert len(r.content) < 2000, len(r.content)
    assert "oops" not in r.text and "0.25" not in r.text


@pytest.mark.parametrize("body", [
    None, [], "text", 3, {}, {"mechanism": "multi_head"}, {"query": {"text": "a"}},
    {"mechanism": "multi_head", "query": "a b"},
    {"mechanism": "multi_head", "query": {"text": 5}},
    {"mechanism": "multi_head", "query": {"tokens": [1, 2]}},
    {"mechanism": "multi_head", "query": {"matrix": [[1, 2], [3]]}},
    {"mechanism": "multi_head", "query": {"matrix": [[[1]]]}},
    {"mechanism": "multi_head", "query": {"matrix": [[1, 2]], "tokens": ["a", "b"]}},
    {"mechanism": "multi_head", "query": {"text": "a", "tokens": ["a"]}},
    {"mechanism": "concat", "query": {"text": "a b"}, "key": {"text": "c"}},
    {"mechanism": "multi_head", "query": {"text": "a b"}, "seed": -1},
    {"mechanism": "multi_head", "query": {"text": "a b"}, "seed": 2**64},
    {"mechanism": "multi_head", "query": {"text": "a b"}, "embedding": {"dim": 0}},
    {"mechanism": "multi_head", "query": {"text": "a b"}, "embedding": {"kind": "glove"}},
    {"mechanism": "multi_head", "query": {"text": "a b c"},
     "embedding": {"kind": "one_hot", "dim": 2}},
    {"mechanism": "multi_head", "query": {"text": "a b"}, "options": {"heads": 0}},
    {"mechanism": "multi_head", "query": {"text": "a b"}, "options": {"scale": "big"}},
    {"mechanism": "multi_head", "query": {"text": "a b"}, "weights": {"W_q": "1 2\n3"}},
    {"mechanism": "multi_head", "query": {"text": "a b"}, "weights": {"W_q": {"a": 1}}},
    {"mechanism": "additive", "query": {"text": "a b"}, "weights": {"v_a": [[1, 2], [3, 4]]}},
])
def test_malformed_requests_get_a_4xx_naming_a_field(client, body):
    r = post(client, body)
    assert r.status_code == 422, r.text
    for err in r.json()["detail"]:
        assert err["loc"] and err["msg"] and "input" not in err


def test_a_small_request_cannot_ask_for_a_huge_result(client):
    """512 tokens with wide heads: a 4 KB body that would answer with hundreds of MB."""
    body = {"mechanism": "multi_head", "query": {"tokens": [f"t{i}" for i in range(512)]},
            "embedding": {"dim": 1024}, "options": {"heads": 4, "d_k": 1024, "d_v": 1024}}
    r = client.post("/api/v1/attention", json=body)
    assert r.status_code == 422
    msg = r.json()["detail"][0]["msg"]
    assert "expected a result of at most 6,000,000 numbers" in msg and "got" in msg
    assert len(r.content) < 2000


def test_a_share_has_a_smaller_cap_than_a_response(client):
    body = {"mechanism": "multi_head", "query": {"tokens": [f"t{i}" for i in range(512)]},
            "options": {"heads": 4}}
    assert client.post("/api/v1/attention?encoding=typed", json=body).status_code == 200
    r = client.post("/api/v1/shares", json={"request": body})
    assert r.status_code == 422
    assert "at most 3,000,000 numbers" in r.json()["detail"][0]["msg"]


@pytest.mark.parametrize("side", [{"text": "a \ud800"}, {"tokens": ["\udfff"]},
                                  {"matrix": [[1.0]], "tokens": ["\ud83d"]}])
def test_a_lone_surrogate_is_a_422_naming_the_field(client, side):
    body = {"mechanism": "scaled_dot_product", "query": side}
    for url, payload in (("/api/v1/attention", body), ("/api/v1/shares", {"request": body})):
        r = client.post(url, content=json.dumps(payload),
                        headers={"content-type": "application/json"})
        assert r.status_code == 422, r.text
        assert "valid Unicode text, got a lone surrogate" in r.json()["detail"][0]["msg"]
    assert client.get("/api/v1/health").status_code == 200


def test_embedding_dim_is_limited_only_when_tokens_are_embedded(client):
    big = {"dim": 5000}
    r = client.post("/api/v1/attention", json={"mechanism": "scaled_dot_product",
                                               "query": {"text": "a b"}, "embedding": big})
    assert r.status_code == 422
    assert r.json()["detail"][0]["msg"].startswith("embedding.dim: expected at most 1024")
    r = client.post("/api/v1/attention", json={"mechanism": "scaled_dot_product",
                                               "query": {"matrix": [[1, 0], [0, 1]]},
                                               "embedding": big})
    assert r.status_code == 200  # a pasted matrix is X itself: no embedding is made
