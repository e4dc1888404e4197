"""Benchmark: `count()` against a plain numpy bincount floor, and read + encode of a CSV.

    python bench/bench_count.py            # synthetic census-like data, 100k and 1M rows
    python bench/bench_count.py --data FILE.csv   # columns state, county, age, sex, race,
                                                  # hispanic, education (as in the plan below)

The workload is the census-style one in the data-module brief: 1-way tables of state, age,
sex, race, education; 2-way state×sex, age×sex, race×hispanic, education×sex; 3-way
state×race×hispanic; county×sex (~6,200 cells). The floor is, per table,
``flat = Σ code_j.astype(int64) × stride_j; np.bincount(flat, minlength=cells)`` on the same
encoded columns; both are timed alternately in the same run (median of REPEATS runs each).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dprelease.data.count import EncodedData, count, encode, load_data, read_data
from dprelease.plan.model import Plan
from dprelease.plan.parse import parse_plan

REPEATS = 9
SIZES = (100_000, 1_000_000)
STATES = tuple(f"{n:02d}" for n in range(1, 57) if n not in (3, 7, 14, 43, 52))  # 50 + DC
RACES = ("White", "Black", "AIAN", "Asian", "NHPI", "Other", "Two or more")
EDUCATION = ("None", "Primary", "Some HS", "HS", "Some college", "Bachelor", "Graduate")
TABLES = (
    ["state"],
    ["age"],
    ["sex"],
    ["race"],
    ["education"],
    ["state", "sex"],
    ["age", "sex"],
    ["race", "hispanic"],
    ["education", "sex"],
    ["state", "race", "hispanic"],
    ["county", "sex"],
)


def counties() -> tuple[list[str], np.ndarray]:
    """About 3,100 county codes ("SSCCC"), each nested in a state; and each one's state.

    Fixed (seed 0), so that a CSV written by an earlier run fits the plan of a later one.
    """
    rng = np.random.default_rng(0)
    per_state = rng.multinomial(3_100 - len(STATES), np.full(len(STATES), 1 / len(STATES))) + 1
    labels = [
        f"{s}{2 * k + 1:03d}" for s, n in zip(STATES, per_state, strict=True) for k in range(n)
    ]
    return labels, np.repeat(np.arange(len(STATES)), per_state)


def make_plan(county_labels: list[str], county_state: np.ndarray) -> Plan:
    """The benchmark plan, built through the plan-file parser like a user's plan."""
    parent_map = {c: STATES[s] for c, s in zip(county_labels, county_state, strict=True)}
    columns = {
        "state": {"domain": list(STATES)},
        "county": {"domain": county_labels, "parent": "state", "parent_map": parent_map},
        "age": {"domain": {"range": [0, 100]}},
        "sex": {"domain": ["Female", "Male"]},
        "race": {"domain": list(RACES)},
        "hispanic": {"domain": ["No", "Yes"]},
        "education": {"domain": list(EDUCATION)},
    }
    tables = [{"name": "_x_".join(by), "by": by} for by in TABLES]
    budget = {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-10}
    return parse_plan({"columns": columns, "tables": tables, "budget": budget})


def write_sample(
    path: Path, rows: int, rng: np.random.Generator, plan: Plan, county_state: np.ndarray
) -> None:
    """Census-like rows, generated as codes with numpy and written as text by pyarrow."""
    county = rng.integers(0, len(county_state), rows)
    codes = {
        "state": county_state[county],
        "county": county,
        "age": rng.binomial(100, 0.38, rows),
        "sex": rng.integers(0, 2, rows),
        "race": rng.choice(len(RACES), rows, p=[0.6, 0.13, 0.01, 0.06, 0.01, 0.07, 0.12]),
        "hispanic": (rng.random(rows) < 0.19).astype(int),
        "education": rng.integers(0, len(EDUCATION), rows),
    }
    labels = {name: list(plan.schema[name].labels) for name in codes}
    table = pa.table(
        {
            name: pa.DictionaryArray.from_arrays(pa.array(c, pa.int32()), pa.array(labels[name]))
            for name, c in codes.items()
        }
    )
    pacsv.write_csv(table, path)


def floor(encoded: EncodedData, plan: Plan) -> list[np.ndarray]:
    """The plain-numpy floor: int64 flat index and one bincount per table."""
    out = []
    for spec in plan.tables:
        shape = spec.shape(plan.schema)
        strides = [math.prod(shape[j + 1 :]) for j in range(len(shape))]
        flat = sum(
            encoded.codes[n].astype(np.int64) * s for n, s in zip(spec.by, strides, strict=True)
        )
        out.append(np.bincount(flat, minlength=math.prod(shape)))
    return out


def side_by_side(first: Callable[[], object], second: Callable[[], object]) -> tuple[float, float]:
    """Median seconds of each, run alternately so both see the same machine load."""
    times = [(timed(first), timed(second)) for _ in range(REPEATS)]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def with_left_out(encoded: EncodedData, share: float, rng: np.random.Generator) -> EncodedData:
    """The same codes with `share` of race and county set to -1 (left out)."""
    codes = dict(encoded.codes)
    for name in ("race", "county"):
        column = codes[name].copy()
        column[rng.random(len(column)) < share] = -1
        codes[name] = column
    return EncodedData(codes, encoded.report)


def bench(path: Path, plan: Plan, rng: np.random.Generator) -> str:
    """A Markdown row: read and encode times, count vs floor, and count with left-out rows."""
    needed = list(plan.used_columns)
    read_s = statistics.median(timed(lambda: read_data(path, columns=needed)) for _ in range(3))
    table = read_data(path, columns=needed)
    encode_s = statistics.median(timed(lambda: encode(table, plan)) for _ in range(3))
    encoded = load_data(path, plan)
    rows = encoded.rows
    truth = count(encoded, plan)
    for spec, expected in zip(plan.tables, floor(encoded, plan), strict=True):
        assert np.array_equal(truth.counts[spec.name], expected), spec.name
    floor_s, count_s = side_by_side(lambda: floor(encoded, plan), lambda: count(encoded, plan))
    masked = with_left_out(encoded, 0.01, rng)
    _, masked_s = side_by_side(lambda: floor(encoded, plan), lambda: count(masked, plan))
    return (
        f"| {rows:,} | {read_s * 1000:.0f} ms | {encode_s * 1000:.0f} ms | {floor_s * 1000:.1f} ms "
        f"| {count_s * 1000:.1f} ms | **{count_s / floor_s:.2f}×** "
        f"| {masked_s * 1000:.1f} ms ({masked_s / floor_s:.2f}×) |"
    )


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="a CSV with the benchmark columns")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    county_labels, county_state = counties()
    plan = make_plan(county_labels, county_state)
    lines = [
        f"count() vs numpy floor, {len(plan.tables)} tables, "
        f"{sum(s.cells(plan.schema) for s in plan.tables):,} cells; median of {REPEATS} runs",
        "",
        "| rows | read_data (CSV) | encode | floor | count() | count/floor | 1% left out |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    if args.data is not None:
        lines.append(bench(args.data, plan, rng))
    else:
        with tempfile.TemporaryDirectory() as folder:
            for rows in SIZES:
                path = Path(folder) / f"sample_{rows}.csv"
                write_sample(path, rows, rng, plan, county_state)
                lines.append(bench(path, plan, rng))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
