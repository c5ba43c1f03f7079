"""Head statistics, thumbnails, rollout and the byte-bounded cache, on hand-made inputs."""

from __future__ import annotations

import math
import threading
import time

import pytest
import torch

from app.models import analysis
from app.models.cache import ByteLRU


def rows(n: int) -> torch.Tensor:
    """A random row-stochastic [n, n]."""
    return torch.softmax(torch.randn(n, n, generator=torch.Generator().manual_seed(n)), -1)


def test_stats_of_known_heads():
    n = 5
    ident = torch.eye(n)
    prev = torch.zeros(n, n)
    prev[0, 0] = 1
    prev[torch.arange(1, n), torch.arange(n - 1)] = 1
    uniform = torch.full((n, n), 1 / n)
    s = analysis.head_stats(torch.stack([ident, prev, uniform]), cls_pos=[0], sep_pos=[n - 1])
    torch.testing.assert_close(s["entropy"], torch.tensor([0, 0, math.log(n)]))
    torch.testing.assert_close(s["self"], torch.tensor([1, 1 / n, 1 / n]))
    torch.testing.assert_close(s["prev"], torch.tensor([0, 1, 1 / n]))
    torch.testing.assert_close(s["max_weight"], torch.tensor([1, 1, 1 / n]))
    torch.testing.assert_close(s["cls"], torch.tensor([1 / n, 2 / n, 1 / n]))
    torch.testing.assert_close(s["sep"], torch.tensor([1 / n, 0, 1 / n]))


def test_entropy_from_logits_equals_the_definition():
    logits = torch.randn(3, 40, 40, generator=torch.Generator().manual_seed(1)) * 8
    alpha = torch.softmax(logits, -1)
    direct = analysis.entropy(alpha)
    torch.testing.assert_close(analysis.entropy(alpha, logits), direct, atol=1e-5, rtol=0)
    assert direct.min() >= 0 and direct.max() <= math.log(40)


def test_stats_without_special_tokens_are_none():
    s = analysis.head_stats(rows(3)[None], cls_pos=[], sep_pos=[])
    assert s["cls"] is None and s["sep"] is None


def test_pool_is_block_mean_with_a_short_last_block():
    a = rows(130)  # blocks of 3 tokens: 43 full blocks and one of 1
    p = analysis.pool(a[None], size=64)[0]
    assert p.shape == (44, 44)
    torch.testing.assert_close(p[0, 0], a[:3, :3].mean())
    torch.testing.assert_close(p[10, 43], a[30:33, 129:].mean())
    torch.testing.assert_close(p[43, 43], a[129, 129])


def test_pool_small_is_identity_and_512_is_64():
    a = rows(20)
    torch.testing.assert_close(analysis.pool(a), a)
    assert analysis.pool(torch.rand(2, 3, 512, 512)).shape == (2, 3, 64, 64)


def test_rollout_is_the_product_of_head_averaged_residual_matrices():
    n = 6
    layers = [torch.stack([rows(n), rows(n).T.softmax(-1)]) for _ in range(3)]
    expected = torch.eye(n)
    for a in layers:
        m = 0.5 * a.mean(0) + 0.5 * torch.eye(n)  # (A + I) / 2: rows of A sum to 1
        expected = m @ expected
    r = analysis.rollout(layers)
    torch.testing.assert_close(r, expected)
    torch.testing.assert_close(r.sum(-1), torch.ones(n))


def test_pooled_rollout_is_the_pool_of_the_full_rollout():
    n = 130
    layers = [torch.stack([rows(n), rows(n).T.softmax(-1)]) for _ in range(3)]
    full = analysis.rollout(layers, size=n)  # no pooling
    assert full.shape == (n, n)
    pooled = analysis.rollout(layers, size=64)
    assert pooled.shape == (44, 44)
    torch.testing.assert_close(pooled, analysis.pool(full, size=64))


def test_cache_evicts_least_recently_used_by_bytes():
    cache = ByteLRU(100)
    calls = []

    def value(v):
        calls.append(v)
        return v

    for key, size in (("a", 40), ("b", 40)):
        cache.get_or_compute(key, lambda k=key: value(k), lambda _, s=size: s)
    cache.get_or_compute("a", lambda: value("a again"), lambda _: 40)  # a is now newest
    cache.get_or_compute("c", lambda: value("c"), lambda _: 40)  # 120 > 100: b leaves
    assert "a" in cache and "c" in cache and "b" not in cache
    assert cache.bytes == 80 and calls == ["a", "b", "c"]
    cache.get_or_compute("huge", lambda: value("huge"), lambda _: 101)
    assert "huge" not in cache and len(cache) == 2


def test_cache_computes_once_for_concurrent_callers():
    cache = ByteLRU(1000)
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.2)
        return "value"

    out = []
    threads = [threading.Thread(target=lambda: out.append(
        cache.get_or_compute("k", slow, lambda _: 10))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == ["value"] * 4 and len(calls) == 1
    assert cache.misses == 1 and cache.hits == 3


def test_cache_failure_is_not_kept():
    cache = ByteLRU(1000)
    with pytest.raises(ValueError):
        cache.get_or_compute("k", lambda: (_ for _ in ()).throw(ValueError("bad")),
                             lambda _: 1)
    assert cache.get_or_compute("k", lambda: 5, lambda _: 1) == 5
