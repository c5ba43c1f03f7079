"""Benchmark: the pretrained-model view against bertviz, side by side in one run.

    python bench/model.py [--repeats 7] [--switches 30] [--threads 0]

Both sides use the same torch intra-op threads: ``--threads N`` sets torch.set_num_threads(N)
here and ATTNSCOPE_TORCH_THREADS=N for the server; 0 (default) keeps torch's default in both
(the server's own default is 1 thread, good for many small requests, half the speed of 2 on
one 512-token forward).

Everything runs on the same 512-token input to all-MiniLM-L6-v2 (the packaged model):

1. bare forward pass: transformers' BertModel (eager attention), warm, median of
   ``--repeats``; also with ``output_attentions`` (what bertviz needs) and our own traced
   forward (attention through app.attention.MultiHead), for reference;
2. bertviz 1.4.1 ``head_view(..., html_action="return")`` on transformers' attentions:
   time and bytes of the HTML (``.data``);
3. our first view over HTTP: a uvicorn subprocess on a free 127.0.0.1 port, warmed up on
   another text (model loaded); then POST /overview and POST /attention for one head with
   ``?encoding=typed`` on a text the server has not seen: total time and bytes. Measured
   for α alone (``"steps": false``, what the page's first view asks for) and with the
   head's trace steps; each repeat uses a fresh 512-token text (one word changed) so every
   forward pass is uncached;
4. switching head: ``--switches`` requests to different (layer, head) on the cached text;
   p50 end to end, with steps and without.

Prints the figures and the ratios against the targets of issue 5: first view ≤ 2× the
bare forward, bertviz time / ours ≥ 30×, bertviz bytes / ours ≥ 250×, head switch p50
≤ 100 ms. The machine is shared: medians, and the load average is printed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server import start  # noqa: E402 (bench/ is on sys.path when run as a script)

N_TOKENS = 512
MODEL = "minilm-l6"
SOURCE = ("attention lets every token look at every other token and decide how much of "
          "each one it wants to mix into its own representation while the heads of a layer "
          "each learn their own pattern some follow the previous word others the separator "
          "and a few track syntax such as the subject of a verb")
WORDS = SOURCE.split()


def text_of(tokenizer, variant: int = 0) -> str:
    """A text of exactly N_TOKENS tokens ([CLS] and [SEP] included); `variant` changes its
    first word so that the server has not seen it."""
    words = [f"variant{variant}"] if variant else []
    i = 0
    while len(tokenizer.encode(" ".join(words)).ids) < N_TOKENS:
        words.append(WORDS[i % len(WORDS)])
        i += 1
    while len(tokenizer.encode(" ".join(words)).ids) > N_TOKENS:
        words.pop()
    while len(tokenizer.encode(" ".join(words)).ids) < N_TOKENS:
        words.append("a")
    text = " ".join(words)
    assert len(tokenizer.encode(text).ids) == N_TOKENS
    return text


# --- the two sides ----------------------------------------------------------------------

def load_transformers():
    from transformers import BertModel

    from app.models.registry import builtin_path

    return BertModel.from_pretrained(str(builtin_path()), attn_implementation="eager").eval()


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bertviz_side(model, ids: list[int], tokens: list[str]) -> dict:
    """bertviz's head_view on transformers' attentions: seconds and bytes of its HTML."""
    import torch
    from bertviz import head_view

    with torch.inference_mode():
        attentions = model(torch.tensor([ids]), output_attentions=True).attentions
    t = time.perf_counter()
    html = head_view(attention=attentions, tokens=tokens, html_action="return")
    seconds = time.perf_counter() - t
    return {"bertviz_s": seconds, "bertviz_bytes": len(html.data.encode("utf-8"))}


def post(conn: http.client.HTTPConnection, path: str, body: dict) -> bytes:
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"{path}: {r.status} {data[:300]!r}")
    return data


def first_view(conn, text: str, steps: bool) -> tuple[float, int]:
    """Overview + one head (typed), as the page asks on a new text: seconds, bytes."""
    t = time.perf_counter()
    a = post(conn, f"/api/v1/models/{MODEL}/overview?encoding=typed", {"text": text})
    b = post(conn, f"/api/v1/models/{MODEL}/attention?encoding=typed",
             {"text": text, "layer": 0, "head": 0, "steps": steps})
    return time.perf_counter() - t, len(a) + len(b)


def head_switches(conn, text: str, count: int, steps: bool) -> list[float]:
    times = []
    for i in range(count):
        layer, head = divmod((7 * i + 1) % 72, 12)
        t = time.perf_counter()
        post(conn, f"/api/v1/models/{MODEL}/attention?encoding=typed",
             {"text": text, "layer": layer, "head": head, "steps": steps})
        times.append(time.perf_counter() - t)
    return times


def paired(model, conn, tokenizer, text: str, ids: list[int], repeats: int) -> dict:
    """Bare forward, our traced forward and both first views, interleaved per repeat so
    that a busy neighbour slows every side alike; each first view on an unseen text."""
    import torch

    from app.models.service import ModelService

    encoder = ModelService([]).entry(MODEL).load().encoder
    x = torch.tensor([ids])
    rows = []
    with torch.inference_mode():
        model(x)
        model(x, output_attentions=True)
        encoder.run(ids)
        first_view(conn, text_of(tokenizer, 999), True)  # server kernels warm at 512
        for i in range(repeats):
            alpha = first_view(conn, text_of(tokenizer, 100 + i) if i else text, False)
            rows.append({"bare": timed(lambda: model(x)),
                         "with_attentions": timed(lambda: model(x, output_attentions=True)),
                         "ours_forward": timed(lambda: encoder.run(ids)),
                         "alpha_s": alpha[0], "alpha_b": alpha[1]})
            full = first_view(conn, text_of(tokenizer, 200 + i), True)
            rows[-1].update(full_s=full[0], full_b=full[1])
    out = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    out["alpha_ratio"] = statistics.median(r["alpha_s"] / r["bare"] for r in rows)
    out["full_ratio"] = statistics.median(r["full_s"] / r["bare"] for r in rows)
    return out


def measure(tokenizer, text: str, repeats: int, switches: int, threads: int) -> dict:
    import torch

    if threads:
        torch.set_num_threads(threads)
    enc = tokenizer.encode(text)
    ids, tokens = list(enc.ids), list(enc.tokens)
    model = load_transformers()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start(Path(tmp) / "bench.db", {"ATTNSCOPE_TORCH_THREADS": str(threads)})
        try:
            conn = http.client.HTTPConnection(urlsplit(url).hostname, urlsplit(url).port,
                                              timeout=300)
            cold = timed(lambda: post(conn, f"/api/v1/models/{MODEL}/overview?encoding=typed",
                                      {"text": "warm up"}))
            out = paired(model, conn, tokenizer, text, ids, repeats)
            out["switch_steps_p50"] = statistics.median(head_switches(conn, text, switches, True))
            out["switch_alpha_p50"] = statistics.median(head_switches(conn, text, switches,
                                                                      False))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    out["cold_load"] = cold
    out["threads"] = torch.get_num_threads()
    out.update(bertviz_side(model, ids, tokens))
    return out


# --- report ------------------------------------------------------------------------------

def check(label: str, value: float, target: str, ok: bool) -> None:
    print(f"  {label:<44} {value:>10.1f}   target {target:<8} {'PASS' if ok else 'FAIL'}")


def report(m: dict, repeats: int) -> None:
    mb = 1e6
    print(f"\nall-MiniLM-L6-v2, {N_TOKENS} tokens, medians of {repeats}, torch threads "
          f"{m['threads']} on both sides, load average {os.getloadavg()[0]:.2f} "
          f"({os.cpu_count()} cores, shared)\n")
    print(f"  transformers forward (bare, eager)        {m['bare'] * 1e3:9.0f} ms")
    print(f"  transformers forward + output_attentions  {m['with_attentions'] * 1e3:9.0f} ms")
    print(f"  our traced forward (MultiHead per layer)  {m['ours_forward'] * 1e3:9.0f} ms")
    print(f"  bertviz head_view HTML (one run)          {m['bertviz_s']:9.2f} s  "
          f"{m['bertviz_bytes'] / mb:9.1f} MB")
    print(f"  server cold: first request, model load    {m['cold_load']:9.2f} s")
    print(f"  first view, overview + head α (HTTP)      {m['alpha_s'] * 1e3:9.0f} ms "
          f"{m['alpha_b'] / mb:9.2f} MB")
    print(f"  first view, overview + head with steps    {m['full_s'] * 1e3:9.0f} ms "
          f"{m['full_b'] / mb:9.2f} MB")
    print(f"  head switch p50, with steps               {m['switch_steps_p50'] * 1e3:9.0f} ms")
    print(f"  head switch p50, α only                   {m['switch_alpha_p50'] * 1e3:9.0f} ms")
    print("\nratios (first view = overview + head α, what the page asks first; the ratio to "
          "the bare forward is the median of per-repeat ratios):")
    check("first view / bare forward (×)", m["alpha_ratio"], "≤ 2", m["alpha_ratio"] <= 2)
    check("bertviz time / first view (×)", m["bertviz_s"] / m["alpha_s"], "≥ 30",
          m["bertviz_s"] >= 30 * m["alpha_s"])
    check("bertviz bytes / first view (×)", m["bertviz_bytes"] / m["alpha_b"], "≥ 250",
          m["bertviz_bytes"] >= 250 * m["alpha_b"])
    check("head switch p50, with steps (ms)", m["switch_steps_p50"] * 1e3, "≤ 100",
          m["switch_steps_p50"] <= 0.1)
    print("with the head's trace steps in the first view too:")
    check("first view with steps / bare forward (×)", m["full_ratio"], "≤ 2",
          m["full_ratio"] <= 2)
    check("bertviz time / first view with steps (×)", m["bertviz_s"] / m["full_s"], "≥ 30",
          m["bertviz_s"] >= 30 * m["full_s"])
    check("bertviz bytes / first view with steps (×)", m["bertviz_bytes"] / m["full_b"],
          "≥ 250", m["bertviz_bytes"] >= 250 * m["full_b"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--switches", type=int, default=30)
    parser.add_argument("--threads", type=int, default=0,
                        help="torch intra-op threads on both sides (0 = torch's default)")
    args = parser.parse_args()

    from app.models.checkpoint import load_tokenizer
    from app.models.registry import builtin_path

    tokenizer = load_tokenizer(builtin_path())
    report(measure(tokenizer, text_of(tokenizer), args.repeats, args.switches, args.threads),
           args.repeats)


if __name__ == "__main__":
    main()
