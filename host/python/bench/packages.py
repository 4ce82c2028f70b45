"""The Python package's side of `cargo bench -p render-store-tests --bench packages`: for
each case file DIR/N.jsonl (one compact JSON object a line), the median time in seconds
of render_ref, put_render (into a fresh ``mem://`` store, as the Rust and Go sides put
into theirs) and get_render, printed as JSON {N: {render_ref, put_render, get_render}}.
Same timing rule as the bench's Rust side. With ``--python-bucket`` the stores are over
a Python MemoryBucket instead, served through the C ABI's callbacks (what those add).

    python host/python/bench/packages.py DIR N...
"""

import json
import sys
import time
from pathlib import Path

import render_store as rs


def median(min_seconds, f):
    start = time.perf_counter()
    warm = 0
    while warm < 1 or (time.perf_counter() - start < min_seconds and warm < 10_000):
        f()
        warm += 1
    start = time.perf_counter()
    runs = []
    while len(runs) < 3 or (time.perf_counter() - start < min_seconds and len(runs) < 200):
        t = time.perf_counter()
        f()
        runs.append(time.perf_counter() - t)
    runs.sort()
    return runs[len(runs) // 2]


def main() -> None:
    args = sys.argv[1:]
    python_bucket = "--python-bucket" in args
    args = [a for a in args if a != "--python-bucket"]
    directory, cases = Path(args[0]), args[1:]
    runtime = rs.Runtime()

    def fresh() -> rs.RenderStore:
        if python_bucket:
            return rs.RenderStore(rs.MemoryBucket(), runtime)
        store = rs.open("mem://", runtime)
        assert store is not None
        return store

    out = {}
    for n in cases:
        # Objects as bytes, as a caller holding files has them.
        objects = (directory / f"{n}.jsonl").read_bytes().split(b"\n")[:-1]
        release = "bench/app"
        store = fresh()
        ref = store.put_render(release, objects)
        out[n] = {
            "render_ref": median(0.5, lambda: runtime.render_ref(objects)),
            "put_render": median(0.5, lambda: fresh().put_render(release, objects)),
            "get_render": median(0.5, lambda: store.get_render(release, ref)),
        }
    sys.stdout.write(json.dumps(out))


if __name__ == "__main__":
    main()
