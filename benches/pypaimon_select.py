#!/usr/bin/env python3
"""Times pypaimon's pure-Python sidecar `select` on the exact file and query that the Rust
criterion bench `sidecar_select_rows_100k_blocks/point_range/compact` measures, checks both
select the same blocks, and prints the ratio.

Steps (run from the crate root; the bench numbers are only meaningful on a quiet machine):

    python3 -m pip install pypaimon==2.1.0
    LAKECORE_DUMP_SIDECAR=target/pypaimon-cmp cargo bench --bench sidecar -- point_range/compact
    python3 benches/pypaimon_select.py target/pypaimon-cmp

The first command installs the reference implementation (`pypaimon.manifest.manifest_sidecar`,
whose `select(data, manifest, query)` validates the CRC and walks every block). The bench
writes the issue's shape, 100 000 blocks of 3 entries (`select_100k_x3.compact.sidecar`, 4.6
MB, and `select_100k_x3.json`: manifest facts, the query, lakecore's selected block offsets;
bench group `sidecar_select_rows_100k_blocks_x3`), into the given folder, and leaves
criterion's estimate in `target/criterion/.../estimates.json`, which this script reads for
the ratio. `--shape x20` uses the larger shape of earlier measurements instead, 100 000 blocks
of 20 entries (`select_100k.*`, 10.2 MB, group `sidecar_select_rows_100k_blocks`; the bench
command's filter `point_range/compact` runs both shapes).
Both sides are timed on the in-memory bytes, without file I/O.

With `--lakecore target/release/lakecore` (a `--features cli` release build) it also times the
whole `lakecore sidecar select FILE --manifest-size M --entries E --rows A-B --json` process
(spawn to exit, output to a pipe and discarded, page cache warm), alternated with pypaimon's
in-process `select` (one of each per round), after checking that the command selects the same
blocks: the issue's whole-process ratio.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from types import SimpleNamespace

from pypaimon.manifest import manifest_sidecar
from pypaimon.utils.range import Range


def whole_process(binary, path, meta, py_select, runs):
    """Alternates `lakecore sidecar select` (whole process) with pypaimon's select; returns
    the two lists of seconds."""
    first, last = meta["rows"]
    cmd = [binary, "sidecar", "select", path, "--manifest-size", str(meta["manifest_length"]),
           "--entries", str(meta["entries"]), "--rows", f"{first}-{last}", "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True).stdout
    doc = json.loads(out)
    blocks = doc["blocks"] if isinstance(doc, dict) else doc
    offsets = [b["offset"] for b in blocks]
    if offsets != meta["selected_offsets"]:
        sys.exit(f"selections differ: lakecore sidecar select {offsets} vs {meta['selected_offsets']}")
    lake, py = [], []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.PIPE)
        lake.append(time.perf_counter() - t)
        t = time.perf_counter()
        py_select()
        py.append(time.perf_counter() - t)
    return lake, py

# --shape: (file name stem the bench dumps, criterion group).
SHAPES = {
    "x20": ("select_100k", "sidecar_select_rows_100k_blocks"),
    "x3": ("select_100k_x3", "sidecar_select_rows_100k_blocks_x3"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default="target/pypaimon-cmp")
    ap.add_argument("--lakecore", help="the lakecore binary: also time `sidecar select` whole process")
    ap.add_argument("--runs", type=int, default=int(os.environ.get("RUNS", "7")))
    ap.add_argument("--shape", choices=sorted(SHAPES), default="x3",
                    help="x3 (default): the issue's 100k blocks of 3 entries (4.6 MB); x20: "
                         "100k blocks of 20 entries (10.2 MB)")
    a = ap.parse_args()
    folder = a.folder
    name, group = SHAPES[a.shape]
    meta = json.load(open(os.path.join(folder, f"{name}.json")))
    data = open(os.path.join(folder, f"{name}.compact.sidecar"), "rb").read()
    manifest = SimpleNamespace(
        file_size=meta["manifest_length"],
        num_added_files=meta["entries"],
        num_deleted_files=0,
        extra_files=[],
    )
    first, last = meta["rows"]
    query = [Range(first, last)]

    selection = manifest_sidecar.select(data, manifest, query)
    got = [b.offset for b in selection.blocks]
    if got != meta["selected_offsets"]:
        sys.exit(f"selections differ: pypaimon {got} vs lakecore {meta['selected_offsets']}")

    runs = []
    for _ in range(a.runs):
        t = time.perf_counter()
        manifest_sidecar.select(data, manifest, query)
        runs.append(time.perf_counter() - t)
    py = statistics.median(runs)
    print(f"sidecar: {len(data)} bytes, query rows {first}-{last}, {len(got)} block(s) selected")
    print(f"pypaimon select: median {py * 1e3:.2f} ms over {len(runs)} runs "
          f"({len(data) / py / 1e6:.1f} MB/s)")

    # pypaimon's select validates (CRC + structure) and selects in one call; lakecore
    # validates once and then selects any number of times. Both ratios are printed.
    target_dir = os.environ.get("CARGO_TARGET_DIR", "target")
    for bench, what in (("point_range", "select on a validated view"),
                        ("validate_then_point_range", "validate + select")):
        est = os.path.join(target_dir, "criterion", group, bench,
                           "compact", "new", "estimates.json")
        if not os.path.exists(est):
            print(f"no criterion estimate at {est}: run the cargo bench command first")
            continue
        rust = json.load(open(est))["mean"]["point_estimate"] / 1e9
        print(f"lakecore {what} (criterion mean): {rust * 1e3:.3f} ms "
              f"({len(data) / rust / 1e9:.2f} GB/s) -> {py / rust:.0f}x pypaimon")

    if a.lakecore:
        path = os.path.join(folder, f"{name}.compact.sidecar")
        lake, pys = whole_process(a.lakecore, path, meta,
                                  lambda: manifest_sidecar.select(data, manifest, query), a.runs)
        ms = lambda xs: f"{statistics.median(xs) * 1e3:.2f} ms [{min(xs) * 1e3:.2f}-{max(xs) * 1e3:.2f}]"
        ratio = statistics.median(pys) / statistics.median(lake)
        print(f"lakecore sidecar select, whole process: {ms(lake)}; pypaimon select in the same "
              f"rounds: {ms(pys)} -> {ratio:.0f}x pypaimon ({len(lake)} rounds)")


if __name__ == "__main__":
    main()
