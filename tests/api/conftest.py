"""A fresh app on a temporary SQLite file per test: TestClient(create_app(test_settings))."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app


@pytest.fixture
def db_url(tmp_path):
    return f"sqlite:///{tmp_path / 'shares' / 'attnscope.db'}"


@pytest.fixture
def settings(db_url) -> Settings:
    return Settings(database_url=db_url, _env_file=None)


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings)) as c:
        yield c


@pytest.fixture
def small_client(db_url):
    """Tight limits, to test them without building huge requests."""
    s = Settings(database_url=db_url, max_tokens=8, max_d_model=16, max_heads=8,
                 max_cells=100, max_attention_cells=2 * 8 * 8, max_pair_cells=512,
                 max_body_bytes=4096,
                 _env_file=None)
    with TestClient(create_app(s)) as c:
        yield c


@pytest.fixture
def mh_request():
    """A multi-head request (2 heads, d_model 8, causal mask) and a way to vary it."""
    return multi_head_request


def multi_head_request(**changes):
    body = {"mechanism": "multi_head", "query": {"text": "I saw a saw"},
            "embedding": {"kind": "hashed", "dim": 8, "seed": 0, "positions": "none"},
            "seed": 0, "options": {"heads": 2, "mask": "causal"}}
    body.update(changes)
    return body
