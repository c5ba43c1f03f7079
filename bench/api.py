"""Benchmark the JSON API against its own health endpoint, on one server, in one run.

    python bench/api.py [--n 200]

Starts ``uvicorn app.main:create_app --factory`` on 127.0.0.1 (a free port, a temporary
share database) in a subprocess, then measures with one keep-alive HTTP client, requests one
after another:

- p50 latency of GET /api/v1/health (the baseline),
- p50 latency of POST /api/v1/attention, multi_head, for 16 tokens (2 heads, d_model 16)
  and 256 tokens (4 heads, d_model 64), in both encodings (plain lists, typed arrays),
- bytes per number of each response (every number of every step, α and the output).

Prints a table with each latency as a ratio of the health latency, then stops the server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from math import prod
from pathlib import Path

import httpx
from server import start


def attention_request(n: int, heads: int, d_model: int) -> dict:
    words = [f"w{i}" for i in range(n)]
    return {"mechanism": "multi_head", "query": {"text": " ".join(words)},
            "embedding": {"kind": "hashed", "dim": d_model, "seed": 0, "positions": "none"},
            "seed": 0, "options": {"heads": heads}}


def p50(call, n: int, warmup: int = 5) -> tuple[float, httpx.Response]:
    for _ in range(warmup):
        response = call()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        response = call()
        times.append(time.perf_counter() - t0)
        assert response.status_code == 200, response.text[:300]
    return statistics.median(times), response


def count_numbers(body: dict) -> int:
    """Numbers in a response: every step, α, the output and the weights used."""
    shapes = [s["shape"] for s in body["steps"]]
    shapes.append(body["attention"]["shape"] if isinstance(body["attention"], dict)
                  else _shape(body["attention"]))
    for array in (body["output"], *body.get("weights", {}).values()):
        shapes.append(array["shape"] if isinstance(array, dict) else _shape(array))
    return sum(prod(s) for s in shapes)


def _shape(nested) -> list[int]:
    shape = []
    while isinstance(nested, list):
        shape.append(len(nested))
        nested = nested[0]
    return shape


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200, help="timed requests per case")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        server, url = start(Path(tmp) / "bench.db")
        try:
            with httpx.Client(base_url=url, timeout=60) as client:
                run(client, args.n)
        finally:
            server.terminate()
            server.wait(timeout=30)


def run(client: httpx.Client, n: int) -> None:
    health, _ = p50(lambda: client.get("/api/v1/health"), n)
    rows = [("GET /api/v1/health", health, None, None)]
    cases = [("16 tokens, 2 heads, d_model 16", attention_request(16, 2, 16)),
             ("256 tokens, 4 heads, d_model 64", attention_request(256, 4, 64))]
    for label, body in cases:
        for encoding in ("plain", "typed"):
            url = f"/api/v1/attention?encoding={encoding}"
            latency, response = p50(lambda url=url, body=body: client.post(url, json=body), n)
            numbers = count_numbers(response.json())
            rows.append((f"POST attention, {label}, {encoding}", latency,
                         len(response.content), len(response.content) / numbers))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {n} requests per case "
          "(p50, sequential, keep-alive)")
    print(f"{'case':<58} {'p50 ms':>8} {'× health':>9} {'bytes':>11} {'B/number':>9}")
    for name, latency, size, per in rows:
        extra = f"{size:>11,} {per:>9.2f}" if size else f"{'':>11} {'':>9}"
        print(f"{name:<58} {latency * 1e3:>8.2f} {latency / health:>9.1f} {extra}")


if __name__ == "__main__":
    main()
