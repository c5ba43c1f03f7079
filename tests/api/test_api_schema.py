"""The app against its own OpenAPI: examples run as they are; schemathesis finds no 5xx and
no response that breaks the documented schema (bounded: a few seconds per operation)."""

from __future__ import annotations

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from app.config import Settings
from app.main import create_app

# Small limits keep generated requests cheap; the checks are the same.
SETTINGS = Settings(database_url="sqlite:///:memory:", max_tokens=32, max_d_model=64,
                    max_heads=8, max_cells=4096, max_attention_cells=8 * 32 * 32,
                    _env_file=None)
APP = create_app(SETTINGS)
OPERATIONS = ("/api/v1/health", "/api/v1/mechanisms", "/api/v1/presets",
              "/api/v1/presets/{preset_id}", "/api/v1/attention", "/api/v1/shares",
              "/api/v1/shares/{share_id}")

schema = schemathesis.openapi.from_asgi("/openapi.json", APP).include(
    path=list(OPERATIONS))


def request_examples():
    spec = TestClient(APP).get("/openapi.json").json()
    body = spec["paths"]["/api/v1/attention"]["post"]["requestBody"]["content"]
    return body["application/json"]["examples"]


@pytest.mark.parametrize("name", list(request_examples()))
def test_every_openapi_example_runs_as_it_is(name):
    example = request_examples()[name]["value"]
    with TestClient(create_app(Settings(database_url="sqlite:///:memory:",
                                        _env_file=None))) as client:
        r = client.post("/api/v1/attention", json=example)
        assert r.status_code == 200, r.text[:500]
        r = client.post("/api/v1/shares", json={"request": example})
        assert r.status_code == 201, r.text[:500]


def test_examples_include_every_preset_and_a_paste():
    names = set(request_examples())
    assert "pasted_text" in names and "seed004_worked_example" in names


@schema.parametrize()
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case):
    case.call_and_validate(checks=[
        schemathesis.checks.not_a_server_error,
        schemathesis.checks.status_code_conformance,
        schemathesis.checks.content_type_conformance,
        schemathesis.checks.response_schema_conformance,
    ])
