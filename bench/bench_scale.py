"""Whole-process time and peak memory of `release` at scale, against DuckDB's one query.

Makes the data once under --dir (never in the repository): the synthetic sample at 1 M rows,
repeated to each size, as CSV, as one Parquet file, or (with `parts`) as a folder of Parquet
part files as Spark writes them. Then runs, interleaved, each as a whole process under GNU
`time -v`:
  release: python -m dprelease release PLAN --data DATA --engine E --out NEW.zip
  duckdb:  python bench/duckdb_grouping_sets.py DATA   (one GROUPING SETS query, counts only)
and prints, per size and format, medians of seconds and peak RSS, and the median of the
paired ratios release/duckdb (measured side by side, in the same run). Results are appended
as JSON lines to --dir/results.jsonl (bench/plot_scale.py draws them).

Usage: python bench/bench_scale.py --rows 10000000 --formats csv parquet \
           --engines arrow duckdb --runs 3 [--dir /tmp/dprelease-scale]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from workload import workload_plan_dict  # noqa: E402

BASE_ROWS = 1_000_000
PART_ROWS = 100_000_000


def base_table(folder: Path):  # type: ignore[no-untyped-def]
    import pyarrow.parquet as pq

    from dprelease.sample.generator import generate_sample

    path = folder / "base.parquet"
    if not path.exists():
        pq.write_table(generate_sample(BASE_ROWS, seed=1), path)
    return pq.read_table(path)


def make_data(rows: int, fmt: str, folder: Path) -> Path:
    """The sample repeated to `rows` rows (kept across runs)."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    name = {"csv": f"rows_{rows}.csv", "parquet": f"rows_{rows}.parquet", "parts": f"parts_{rows}"}
    path = folder / name[fmt]
    if path.exists():
        return path
    base = base_table(folder)
    if fmt == "csv":
        pacsv.write_csv(base.slice(0, 1), folder / "header.csv")
        body = folder / "body.csv"
        if not body.exists():
            pacsv.write_csv(base, body, pacsv.WriteOptions(include_header=False))
        with path.open("wb") as out:
            out.write((folder / "header.csv").read_text().splitlines()[0].encode() + b"\n")
            for _ in range(rows // BASE_ROWS):
                with body.open("rb") as part:
                    shutil.copyfileobj(part, out, 16 << 20)
        return path
    if fmt == "parquet":
        with pq.ParquetWriter(path, base.schema) as writer:
            for _ in range(rows // BASE_ROWS):
                writer.write_table(base, row_group_size=BASE_ROWS)
        return path
    part = make_data(PART_ROWS, "parquet", folder)
    path.mkdir()
    for i in range(rows // PART_ROWS):
        shutil.copyfile(part, path / f"part-{i:05d}.parquet")
    (path / "_SUCCESS").write_bytes(b"")
    return path


def timed(command: list[str]) -> tuple[float, float]:
    """Elapsed seconds and peak RSS in MB of one whole process, from GNU time -v."""
    done = subprocess.run(
        ["/usr/bin/time", "-v", *command], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    fields = dict(line.strip().rsplit(": ", 1) for line in done.stderr.splitlines() if ": " in line)
    clock = fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":")
    seconds = sum(float(x) * 60**i for i, x in enumerate(reversed(clock)))
    return seconds, int(fields["Maximum resident set size (kbytes)"]) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--formats", nargs="+", default=["parquet"])
    parser.add_argument("--engines", nargs="+", default=["auto"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default="/tmp/dprelease-scale")
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    plan = folder / "workload.plan.json"
    plan.write_text(json.dumps(workload_plan_dict("unused.csv")))
    print("| rows | format | engine | release s | release MB | duckdb s | duckdb MB | ratio |")
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for rows in args.rows:
        for fmt in args.formats:
            data = make_data(rows, fmt, folder)
            duck = [sys.executable, str(HERE / "duckdb_grouping_sets.py"), str(data)]
            for engine in args.engines:
                scratch = Path(tempfile.mkdtemp(dir=folder))
                mine, theirs = [], []
                for run in range(args.runs):
                    release = [
                        sys.executable, "-m", "dprelease", "release", str(plan),
                        "--data", str(data), "--out", str(scratch / f"r{run}.zip"),
                        "--engine", engine, "--max-rows", str(rows),
                        "--max-data-mb", str(max(2048, rows * 100 // 1_000_000)),
                    ]  # fmt: skip
                    mine.append(timed(release))
                    theirs.append(timed(duck))
                shutil.rmtree(scratch)
                result = {
                    "rows": rows,
                    "format": fmt,
                    "engine": engine,
                    "release_s": statistics.median(t for t, _ in mine),
                    "release_mb": statistics.median(m for _, m in mine),
                    "duckdb_s": statistics.median(t for t, _ in theirs),
                    "duckdb_mb": statistics.median(m for _, m in theirs),
                    "ratio": statistics.median(
                        a[0] / b[0] for a, b in zip(mine, theirs, strict=True)
                    ),
                    "runs": args.runs,
                }
                with (folder / "results.jsonl").open("a") as log:
                    log.write(json.dumps(result) + "\n")
                print(
                    f"| {rows:,} | {fmt} | {engine} | {result['release_s']:.2f} | "
                    f"{result['release_mb']:.0f} | {result['duckdb_s']:.2f} | "
                    f"{result['duckdb_mb']:.0f} | {result['ratio']:.2f}× |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
