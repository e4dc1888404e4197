"""Issue 35, finding 9: small plans that overran the bound at release.

    python bench/bench_consistency_small.py [ROWS]

Generates the issue's two plans (220 three-way tables over 12 two-valued columns, 8.7 KB;
276 pairs over 24 two-valued columns) and ROWS random rows (default 2,000), and releases each
with no ledger through the library (`release_plan`), in a forked child: the kernel's CPU time
and peak memory growth of the whole release (count, allocation, noise, consistency, accuracy,
export), and the CPU of the consistency step alone.
"""

from __future__ import annotations

import itertools
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers.resources import in_child  # noqa: E402


def plan_text(columns: int, width: int, data: str) -> str:
    names = [f"c{i}" for i in range(columns)]
    lines = ["columns:"]
    lines += [f"  {c}: {{kind: categorical, domain: [a, b]}}" for c in names]
    lines.append("tables:")
    for combo in itertools.combinations(names, width):
        lines.append(f"  - {{name: {'_'.join(combo)}, by: [{', '.join(combo)}]}}")
    return "\n".join([*lines, "budget: {epsilon: 1}"]) + "\n"


def data_text(columns: int, rows: int, seed: int = 9) -> str:
    draw = random.Random(seed)
    lines = [",".join(f"c{i}" for i in range(columns))]
    lines += [",".join(draw.choice("ab") for _ in range(columns)) for _ in range(rows)]
    return "\n".join(lines) + "\n"


PLANS = {"220 three-way tables over 12 columns": (12, 3), "276 pairs over 24 columns": (24, 2)}


def release(folder: Path, columns: int, width: int, rows: int) -> None:
    from dprelease.plan.parse import loads_plan
    from dprelease.release.service import ReleaseRequest, release_plan
    from dprelease.release.sources import FileData

    data = folder / f"d{columns}.csv"
    data.write_text(data_text(columns, rows))
    text = plan_text(columns, width, data.name)
    plan = loads_plan(text, "yaml")
    release_plan(ReleaseRequest(plan, FileData(str(data)), charge=False))


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000
    from dprelease.release import noise, service  # noqa: F401  imported once, before the fork
    from dprelease.release.noise import warm_up

    warm_up()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for label, (columns, width) in PLANS.items():
            size = len(plan_text(columns, width, "d.csv").encode())
            start = time.perf_counter()
            run = in_child(lambda c=columns, w=width: release(folder, c, w, rows), timeout=600)
            wall = time.perf_counter() - start
            print(
                f"{label} ({size / 1000:.1f} KB, {rows:,} rows): exit {run.code}, "
                f"{run.cpu_seconds:.1f} s CPU, {wall:.1f} s wall, {run.growth_mb:.0f} MB"
            )


if __name__ == "__main__":
    main()
