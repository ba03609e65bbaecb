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
writes `select_100k.compact.sidecar` (100 000 blocks) and `select_100k.json` (manifest facts,
the query, lakecore's selected block offsets) into the given folder, and leaves criterion's
estimate in `target/criterion/.../estimates.json`, which this script reads for the ratio.
Both sides are timed on the in-memory bytes, without file I/O.
"""

import json
import os
import statistics
import sys
import time
from types import SimpleNamespace

from pypaimon.manifest import manifest_sidecar
from pypaimon.utils.range import Range


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "target/pypaimon-cmp"
    meta = json.load(open(os.path.join(folder, "select_100k.json")))
    data = open(os.path.join(folder, "select_100k.compact.sidecar"), "rb").read()
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
    for _ in range(int(os.environ.get("RUNS", "7"))):
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
        est = os.path.join(target_dir, "criterion", "sidecar_select_rows_100k_blocks", bench,
                           "compact", "new", "estimates.json")
        if not os.path.exists(est):
            print(f"no criterion estimate at {est}: run the cargo bench command first")
            continue
        rust = json.load(open(est))["mean"]["point_estimate"] / 1e9
        print(f"lakecore {what} (criterion mean): {rust * 1e3:.3f} ms "
              f"({len(data) / rust / 1e9:.2f} GB/s) -> {py / rust:.0f}x pypaimon")


if __name__ == "__main__":
    main()
