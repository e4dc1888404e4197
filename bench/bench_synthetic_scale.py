"""Scale of the synthetic step (issue 27): 1 M synthetic persons in ≤ 30 s and ≤ 1 GB.

    /usr/bin/time -v python bench/bench_synthetic_scale.py [--rows 1000000] [--out FILE]

Released tables of the bundled sample plan (its 16 tables, county → state) are made for a
population of `--rows`: the sample's preview tables (numpy noise, consistent, non-negative,
whole) times rows / 50,000, still consistent and whole. Then, timed: the model and the
records (`synthesize`), every table's tabulation (what a release publishes), and
microdata.csv's bytes (written to `--out` when given), in wall and CPU seconds. Peak memory
is the whole process's (`/usr/bin/time -v`'s "Maximum resident set size"), reading the sample
included.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dprelease.data.count import count, load_data
from dprelease.plan.parse import load_plan
from dprelease.release.draw import draw_preview
from dprelease.release.microdata_file import microdata_csv
from dprelease.synthetic.microdata import synthesize

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    plan = load_plan(ROOT / "data" / "census_sample.plan.yaml")
    post = dataclasses.replace(plan.postprocess, consistent=True, synthetic=True)
    plan = dataclasses.replace(plan, postprocess=post)
    truth = count(load_data(plan.data_path, plan), plan)  # type: ignore[arg-type]
    preview = draw_preview(plan, truth, rng=np.random.default_rng(1))
    total = int(next(t for t in preview.tables if t.name == "total").released_counts[0])
    factor = -(-args.rows // total)  # at least `rows` persons
    released = {t.name: t.released_counts * factor for t in preview.tables}
    start, cpu = time.perf_counter(), time.process_time()
    microdata = synthesize(plan, released, np.random.default_rng(2))
    modelled = time.perf_counter()
    tables = {s.name: microdata.tabulate(plan.schema, s.by) for s in plan.tables}
    tabulated = time.perf_counter()
    content = microdata_csv(plan, microdata)
    written = time.perf_counter()
    if args.out:
        args.out.write_bytes(content)
    assert all(np.array_equal(tables[n], released[n]) for n in released)
    print(
        f"{microdata.rows:,} rows × {len(microdata.columns)} columns: model and records "
        f"{modelled - start:.2f} s, tabulations {tabulated - modelled:.2f} s, microdata.csv "
        f"{written - tabulated:.2f} s ({len(content) / 1e6:.0f} MB); synthetic step in all "
        f"{written - start:.2f} s wall, {time.process_time() - cpu:.2f} s CPU (on a shared "
        "machine the wall time counts other processes' turns)"
    )


if __name__ == "__main__":
    main()
