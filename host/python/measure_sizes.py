"""Measures how render size bounds the Python host: renderRef, put and get of one-object
renders of several sizes, with the bulk list<u8> conversion and (up to --slow-max) with
wasmtime-py's own per-element conversion.

    RENDER_STORE_WASM=render_store.wasm python measure_sizes.py [--slow-max BYTES] [SIZE...]

Sizes are bytes, or with a K/M suffix (KiB, MiB). Prints one line per size and path.
"""

from __future__ import annotations

import argparse
import time

import render_store as rs

DEFAULT_SIZES = ["10K", "100K", "1M", "2.5M", "4M", "16M"]


def size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20}
    if text[-1].upper() in units:
        return int(float(text[:-1]) * units[text[-1].upper()])
    return int(text)


def render(n: int) -> bytes:
    """One JSON object of exactly n bytes (its canonical form is n + 1 bytes)."""
    filler = n - len(b'{"data":""}')
    return b'{"data":"' + b"x" * filler + b'"}'


def timed(f, repeat: int):
    """The best time of `repeat` runs (the first call of a size also pays for fresh
    pages of memory) and the value, or the error's short form."""
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            value = f()
        except rs.RenderStoreError as e:
            short = "hostcall data cap" if "hostcalls has been exhausted" in e.message else e.message[:80]
            return time.perf_counter() - start, f"{e.kind} ({short})"
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sizes", nargs="*", default=DEFAULT_SIZES)
    p.add_argument("--slow-max", type=size, default=1 << 20,
                   help="largest size also measured with wasmtime-py's own conversion")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement (the best is shown)")
    args = p.parse_args()
    runtime = rs.default_runtime()
    for fast in (True, False):
        rs.set_fast_byte_lists(fast)
        path = "bulk" if fast else "per-element"
        for text in args.sizes:
            n = size(text)
            if not fast and n > args.slow_max:
                continue
            objects = [render(n)]
            store = rs.RenderStore(rs.MemoryBucket(), runtime)
            t_ref, ref = timed(lambda: runtime.render_ref(objects), args.repeat)
            # A fresh bucket each time: a second put of the same render only checks `exists`.
            t_put, put = timed(lambda: rs.RenderStore(rs.MemoryBucket(), runtime).put_render("ns/app", objects),
                               args.repeat)
            if isinstance(put, str) and put.startswith("sha256:"):
                store.put_render("ns/app", objects)
                t_get, got = timed(lambda: store.get_render("ns/app", put), args.repeat)
                get = f"{t_get:7.3f}s" if isinstance(got, bytes) and len(got) == n + 1 else f"FAILED {got}"
            else:
                get = "-"
            put_text = f"{t_put:7.3f}s" if isinstance(put, str) and put.startswith("sha256:") else f"FAILED {put}"
            mib_s = n / (1 << 20) / t_ref if isinstance(ref, str) and ref.startswith("sha256:") else 0
            print(f"{path:11} {n:>10} B  renderRef {t_ref:7.3f}s ({mib_s:5.1f} MiB/s)  "
                  f"put {put_text}  get {get}", flush=True)
    rs.set_fast_byte_lists(True)


if __name__ == "__main__":
    main()
