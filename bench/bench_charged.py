"""The default (charged) release against the fastest alternatives, side by side (issue 34).

`release` charges the ledger by default, and the ledger's key fingerprints every record. This
runs, interleaved (A B A B …) as whole processes under GNU `time -v`, with the medians of the
wall seconds and peak RSS and the median of the paired ratios:

  parquet N   charged `release` of the benchmark workload on N rows of Parquet
              vs DuckDB's one GROUPING SETS query (bench/duckdb_grouping_sets.py)
  csv 1M      charged `release` on 1 M rows of CSV vs the numpy floor (bench/floor_release.py)
  unique N    charged `release` vs `--no-ledger` on N rows with a unique id and a float column
              (every value distinct: the fingerprint's worst case)

Each charged run uses a fresh ledger file. The data are made once under --dir (never in the
repository; the sample repeated, as bench/bench_scale.py makes it). The package's bytecode is
compiled first (where PYTHONDONTWRITEBYTECODE is set, every run would compile it again, 0.8 s),
and one run of each command is a warm-up, not counted: the strategy's search is then read
from its cache folder, as on any second release of a plan (`--cold` keeps no cache,
`DPRELEASE_CACHE=off`: every run searches).

Usage: python bench/bench_charged.py [--parquet-rows 100000000] [--unique-rows 10000000]
           [--runs 3] [--dir /tmp/dprelease-scale] [--only parquet csv unique] [--cold]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_scale import make_data, timed  # noqa: E402
from workload import workload_plan_dict  # noqa: E402


def unique_data(rows: int, folder: Path) -> Path:
    """The sample repeated to `rows` rows, with a unique id and a float income (kept)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"unique_{rows}.parquet"
    if path.exists():
        return path
    base = pq.read_table(make_data(1_000_000, "parquet", folder))
    generator = np.random.default_rng(7)
    with pq.ParquetWriter(
        path,
        base.schema.set(
            base.schema.get_field_index("income"), pa.field("income", pa.float64())
        ).append(pa.field("person", pa.int64())),
    ) as writer:
        for start in range(0, rows, base.num_rows):
            part = base.set_column(
                base.schema.get_field_index("income"),
                "income",
                pa.array(generator.lognormal(10.5, 0.8, base.num_rows)),
            ).append_column("person", pa.array(np.arange(start, start + base.num_rows)))
            writer.write_table(part, row_group_size=base.num_rows)
    return path


def release(
    plan: Path, data: Path, folder: Path, rows: int, charged: bool
) -> Callable[[], list[str]]:
    def command() -> list[str]:
        scratch = Path(tempfile.mkdtemp(dir=folder))
        ledger = ["--ledger", str(scratch / "ledger.sqlite")] if charged else ["--no-ledger"]
        return [
            sys.executable, "-m", "dprelease", "release", str(plan), "--data", str(data),
            "--out", str(scratch / "r.zip"), *ledger, "--max-rows", str(rows),
            "--max-data-mb", str(max(2048, rows * 100 // 1_000_000)),
        ]  # fmt: skip

    return command


def side_by_side(
    label: str, mine: Callable[[], list[str]], theirs: Callable[[], list[str]], runs: int
) -> dict[str, object]:
    timed(mine())  # warm-up: the page cache, the strategy's cache folder
    timed(theirs())
    a, b = [], []
    for _ in range(runs):
        a.append(timed(mine()))
        b.append(timed(theirs()))
    result = {
        "case": label,
        "charged_s": statistics.median(t for t, _ in a),
        "charged_mb": statistics.median(m for _, m in a),
        "other_s": statistics.median(t for t, _ in b),
        "other_mb": statistics.median(m for _, m in b),
        "ratio": statistics.median(x[0] / y[0] for x, y in zip(a, b, strict=True)),
        "runs": runs,
        "strategy_cache": os.environ.get("DPRELEASE_CACHE") != "off",
    }
    print(
        f"| {label} | {result['charged_s']:.2f} | {result['charged_mb']:.0f} | "
        f"{result['other_s']:.2f} | {result['other_mb']:.0f} | {result['ratio']:.2f}× |",
        flush=True,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parquet-rows", type=int, default=100_000_000)
    parser.add_argument("--unique-rows", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default="/tmp/dprelease-scale")
    parser.add_argument("--only", nargs="+", default=["parquet", "csv", "unique"])
    parser.add_argument("--cold", action="store_true", help="no strategy cache (every search)")
    args = parser.parse_args()
    compileall.compile_dir(HERE.parent / "dprelease", quiet=1, force=False)
    if args.cold:
        os.environ["DPRELEASE_CACHE"] = "off"  # the child processes inherit it
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    plan = folder / "workload.plan.json"
    plan.write_text(json.dumps(workload_plan_dict("unused.csv")))
    print("| case | charged s | charged MB | other s | other MB | charged / other |")
    print("|---|---:|---:|---:|---:|---:|")
    results = []
    if "parquet" in args.only:
        rows = args.parquet_rows
        data = make_data(rows, "parquet", folder)
        duck = [sys.executable, str(HERE / "duckdb_grouping_sets.py"), str(data)]
        results.append(
            side_by_side(
                f"parquet {rows:,} rows vs DuckDB's query",
                release(plan, data, folder, rows, True),
                lambda: duck,
                args.runs,
            )
        )
    if "csv" in args.only:
        data = make_data(1_000_000, "csv", folder)
        floor = [sys.executable, str(HERE / "floor_release.py"), str(data)]
        results.append(
            side_by_side(
                "csv 1,000,000 rows vs the numpy floor",
                release(plan, data, folder, 1_000_000, True),
                lambda: floor,
                args.runs,
            )
        )
    if "unique" in args.only:
        rows = args.unique_rows
        data = unique_data(rows, folder)
        results.append(
            side_by_side(
                f"unique id and float, {rows:,} rows, vs --no-ledger",
                release(plan, data, folder, rows, True),
                release(plan, data, folder, rows, False),
                args.runs,
            )
        )
    with (folder / "charged.jsonl").open("a") as log:
        for result in results:
            log.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
