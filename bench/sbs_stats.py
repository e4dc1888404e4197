"""Side by side (issue 38.3): dprelease's median with `method: auto` against diffprivlib's.

Cells of 600, 1,200 and 2,400 rows of lognormal incomes (median ≈ 22,000, the ACS-like
shape of `bench_statistics_unbounded.py`), the same ε (pure, 1) and the same bounds
[0, 500,000] on both sides; the metric is the RMSE of the released median against the
cell's true median (`np.median`) over `seeds` draws, one fresh cell per seed. dprelease's
side goes through the plan's parser and the statistics registry, as a release does: the
statistic `{quantile: 0.5, column: income, bounds: [0, 500000], method: auto}` without a
public `min_cell_rows`, calibrated to ε = 1 (auto then picks the exponential mechanism on the
finest grid the bounds allow, 10,001 candidates 50 apart, since no resolution is given),
drawn with the preview sampler (the same law as OpenDP's secure draw, seeded here so that
runs repeat). For scale (no goal): auto at `resolution: 500`, the grid of 1,001 candidates
auto took before, and the smooth-sensitivity median with the textbook bound (what
`method: smooth_sensitivity` gives, Cauchy noise under pure ε). "ahead": dprelease's RMSE
is at most diffprivlib's, or above by less than twice the two
RMSEs' combined standard error (level within noise).

    python bench/sbs_stats.py [--quick]

diffprivlib is not a dependency of dprelease (`pip install diffprivlib`); without it the rows
are not measured and the script says so.
"""

from __future__ import annotations

import importlib.metadata
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dprelease.plan.stat_kinds import AUTO, UNBOUNDED
from dprelease.plan.stat_spec import parse_stat
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.noise import PreviewNoise
from dprelease.stats.registry import kind_of

SIZES = (600, 1_200, 2_400)
COARSE = 500.0  # the grid auto took before it chose the finest: 1,001 candidates
CASES = ((AUTO, None), (AUTO, COARSE), (UNBOUNDED["quantile"], None))
"""dprelease's sides: auto as a plan without `resolution` gets it (the finest grid), and for
scale auto on the coarse grid and smooth sensitivity."""
EPSILON = 1.0
BOUNDS = (0, 500_000)


def cell(n: int, seed: int) -> np.ndarray:
    """A state-sized cell of incomes (lognormal, median ≈ 22,000), whole dollars."""
    return np.round(np.random.default_rng(seed).lognormal(10, 1, n))


def dprelease_draws(
    method: str, n: int, seeds: int, resolution: float | None = None
) -> tuple[list[float], str]:
    """Released medians minus the truth, one per seed, and the method that drew them."""
    raw: dict[str, Any] = {"quantile": 0.5, "column": "income", "bounds": list(BOUNDS)}
    raw["method"] = method
    if resolution is not None:
        raw["resolution"] = resolution
    spec = parse_stat(raw, "median")
    kind = kind_of(spec)
    mech = kind.calibrate(spec, Share("pure", epsilon=EPSILON), StatContext(grouped=False))
    errors = []
    for seed in range(seeds):
        values = cell(n, seed)
        data = StatData(np.zeros(n, dtype=np.int64), values, 1)
        released = kind.draw(data, mech, PreviewNoise(np.random.default_rng(10_000 + seed)))
        errors.append(float(released.ravel()[0]) - float(np.median(values)))
    return errors, kind.chosen_method(mech)


def peer_name() -> str | None:
    try:
        import diffprivlib  # noqa: F401
    except ImportError:
        return None
    return f"diffprivlib {importlib.metadata.version('diffprivlib')} median"


def peer_draws(n: int, seeds: int) -> list[float]:
    from diffprivlib.tools import median

    errors = []
    for seed in range(seeds):
        values = cell(n, seed)
        released = median(values, epsilon=EPSILON, bounds=BOUNDS, random_state=10_000 + seed)
        errors.append(float(released) - float(np.median(values)))
    return errors


def rmse_and_se(errors: list[float]) -> tuple[float, float]:
    """RMSE and its standard error (delta method on the mean square)."""
    squares = np.square(errors)
    rmse = math.sqrt(float(squares.mean()))
    se_square = float(squares.std(ddof=1)) / math.sqrt(len(errors))
    return rmse, se_square / (2 * rmse) if rmse else 0.0


def rows(quick: bool = False) -> list[dict[str, Any]]:
    """One row per cell size (auto against diffprivlib), then smooth sensitivity's for scale."""
    name = peer_name()
    if name is None:
        return []
    seeds = 40 if quick else 300
    out: list[dict[str, Any]] = []
    for n in SIZES:
        theirs, theirs_se = rmse_and_se(peer_draws(n, seeds))
        for method, resolution in CASES:
            errors, drawn = dprelease_draws(method, n, seeds, resolution)
            ours, ours_se = rmse_and_se(errors)
            step = "" if resolution is None else f", resolution {resolution:g}"
            out.append(
                {
                    "comparison": f"median, {n:,} rows, method: {method}{step} ({drawn})",
                    "metric": f"RMSE over {seeds} cells, ε = {EPSILON:g}, bounds {list(BOUNDS)}",
                    "dprelease": ours,
                    "peer": theirs,
                    "peer_name": name,
                    "goal": "≤ diffprivlib's"
                    if resolution is None and method == AUTO
                    else "for scale (no goal)",
                    "method": drawn,
                    "ahead": ours <= theirs + 2 * math.hypot(ours_se, theirs_se)
                    if resolution is None and method == AUTO
                    else None,
                }
            )
    return out


def main() -> None:
    from bench_side_by_side import module_main

    module_main(rows, "diffprivlib is not importable: pip install diffprivlib")


if __name__ == "__main__":
    main()
