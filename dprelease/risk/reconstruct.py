"""CONFIDENTIAL: the reconstruction attack (Dinur–Nissim; the Census Bureau's 2010 experiment).

For each small area, rebuild the microdata from its published tables as an integer program
for scipy's HiGHS: an integer count x_r ≥ 0 for each possible record r (the cross product of
the workload's columns' domains), such that every published cell equals the sum of the records
that fall in it. Exact tables are matched with equality; noisy DP tables cannot all be met at
once, so the attacker minimises the L1 gap Σ|A x − b| instead. Records in a cell published as
0 are ruled out first (the attacker's cheapest step).

Reported: the share of the area's real records reproduced exactly (the overlap of the two
multisets, Σ_r min(x_r, true_r) / people), and for exact tables whether the solution is unique
(one more solve with a no-good cut that forbids this exact multiset). Work is bounded by a
time limit per MILP and a cap on the areas tried; everything skipped is counted.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dprelease.data.count import EncodedData
from dprelease.errors import DataError, quote
from dprelease.plan.model import Plan
from dprelease.plan.schema import CategoricalColumn
from dprelease.risk.area_milp import RecordSpace, solve_area
from dprelease.risk.area_tables import (
    AreaTables,
    default_level,
    exact_area_tables,
    preview_area_tables,
    release_area_tables,
    workload,
)

MAX_PEOPLE = 1000  # an area above this is not "small" and is skipped
SECONDS_PER_AREA = 2.0
MAX_AREAS = 100
Progress = Callable[[float, str], None]


class NothingToAttack(DataError):
    """No area is small enough to attack (issue 37): rates of 0 would read as "attacked, and
    nothing was reproduced", so there are none; the message says what to change instead."""

    def __init__(self, level: str, max_people: int, finer: tuple[str, ...]) -> None:
        self.level, self.max_people, self.finer = level, max_people, finer
        super().__init__(self.message("a finer area level", "a higher limit of people per area"))

    def message(self, level_choice: str, limit_choice: str) -> str:
        """The message, naming the caller's own controls (the CLI's options, the page's
        inputs). It gives no count from the data: only the plan's level and the limit."""
        finer = f" (such as {', '.join(quote(c) for c in self.finer)})" if self.finer else ""
        return (
            f"Nothing was attacked: no {quote(self.level)} area has from 1 to "
            f"{self.max_people:,} people, and larger areas are not attacked, so there are no "
            f"rates to show. Choose {level_choice}{finer} or {limit_choice}."
        )


def finer_levels(plan: Plan, level: str) -> tuple[str, ...]:
    """The geography columns whose parent is `level`: areas inside its areas."""
    return tuple(
        c.name
        for c in plan.schema.columns
        if isinstance(c, CategoricalColumn) and c.parent == level
    )


@dataclass(frozen=True)
class AttackResult:
    """CONFIDENTIAL: the attack on one kind of tables, summed over the areas tried."""

    label: str
    people: int
    reproduced: int
    rebuilt: int  # records in the attacker's solutions
    areas_optimal: int
    areas_time_limited: int  # the best solution found within the limit was used
    areas_without_solution: int
    unique: int = 0  # exact tables: areas whose tables have exactly one solution
    people_certain: int = 0  # people in those areas: their records are disclosed for certain
    not_unique: int = 0
    uniqueness_unknown: int = 0
    seconds: float = 0.0
    epsilon: float | None = None

    @property
    def share(self) -> float:
        """Records reproduced exactly over max(real, rebuilt): a solution with too many
        records gains nothing by it (for exact tables the two totals are equal)."""
        most = max(self.people, self.rebuilt)
        return self.reproduced / most if most else 0.0

    @property
    def recall(self) -> float:
        """Share of the real records that the solution contains."""
        return self.reproduced / self.people if self.people else 0.0

    @property
    def precision(self) -> float:
        """Share of the rebuilt records that are real."""
        return self.reproduced / self.rebuilt if self.rebuilt else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tables": self.label,
            "epsilon": self.epsilon,
            "people": self.people,
            "reproduced": self.reproduced,
            "rebuilt": self.rebuilt,
            "share_reproduced": self.share,
            "share_of_real_records": self.recall,
            "share_of_rebuilt_records": self.precision,
            "areas_optimal": self.areas_optimal,
            "areas_time_limited": self.areas_time_limited,
            "areas_without_solution": self.areas_without_solution,
            "areas_unique_solution": self.unique,
            "people_disclosed_for_certain": self.people_certain,
            "areas_several_solutions": self.not_unique,
            "areas_uniqueness_unknown": self.uniqueness_unknown,
            "seconds": round(self.seconds, 2),
        }


@dataclass(frozen=True)
class Reconstruction:
    """CONFIDENTIAL: the attack on exact tables beside the same attack on DP tables."""

    level: str
    columns: tuple[str, ...]
    tables: tuple[str, ...]
    areas: int  # areas with people in them
    areas_too_big: int
    areas_not_tried: int
    rows_left_out: int  # rows with a value outside the domain of a rebuilt column
    max_people: int
    seconds_per_area: float
    exact: AttackResult
    dp: AttackResult | None
    baseline_share: float  # a guess from the whole data's mix, knowing each area's size
    skipped_tables: tuple[str, ...] = ()

    @property
    def areas_tried(self) -> int:
        return self.areas - self.areas_too_big - self.areas_not_tried

    def to_dict(self) -> dict[str, Any]:
        return {
            "confidential": True,
            "level": self.level,
            "columns": list(self.columns),
            "tables": list(self.tables),
            "areas_with_people": self.areas,
            "areas_tried": self.areas_tried,
            "areas_too_big": self.areas_too_big,
            "areas_not_tried": self.areas_not_tried,
            "rows_left_out": self.rows_left_out,
            "max_people": self.max_people,
            "seconds_per_area": self.seconds_per_area,
            "skipped_tables": list(self.skipped_tables),
            "baseline_share": self.baseline_share,
            "exact": self.exact.to_dict(),
            "dp": None if self.dp is None else self.dp.to_dict(),
        }


def _attack(
    label: str,
    space: RecordSpace,
    tables: AreaTables,
    areas: np.ndarray,
    true_types: dict[int, np.ndarray],
    exact: bool,
    seconds: float,
    progress: Callable[[int], None],
    cost: np.ndarray,
) -> AttackResult:
    started = time.perf_counter()
    people = reproduced = rebuilt = optimal = limited = failed = 0
    unique = several = unknown = certain = 0
    for done, area in enumerate(areas.tolist()):
        truth = true_types[area]
        published = [values[area] for values in tables.values]
        solved = solve_area(space, published, exact, seconds, exact, cost)
        people += int(truth.sum())
        if solved.counts is None:
            failed += 1
        else:
            reproduced += int(np.minimum(solved.counts, truth).sum())
            rebuilt += int(solved.counts.sum())
            optimal += solved.optimal
            limited += not solved.optimal
        unique += exact and solved.unique is True
        certain += int(truth.sum()) if exact and solved.unique is True else 0
        several += exact and solved.unique is False
        unknown += exact and solved.unique is None
        progress(done + 1)
    return AttackResult(
        label=label,
        people=people,
        reproduced=reproduced,
        rebuilt=rebuilt,
        areas_optimal=optimal,
        areas_time_limited=limited,
        areas_without_solution=failed,
        unique=unique,
        people_certain=certain,
        not_unique=several,
        uniqueness_unknown=unknown,
        seconds=time.perf_counter() - started,
    )


def reconstruction_attack(
    plan: Plan,
    encoded: EncodedData,
    *,
    level: str | None = None,
    max_people: int = MAX_PEOPLE,
    seconds_per_area: float = SECONDS_PER_AREA,
    max_areas: int = MAX_AREAS,
    release_dir: str | Path | None = None,
    per_area: bool = False,
    with_dp: bool = True,
    rng: np.random.Generator | None = None,
    progress: Progress | None = None,
) -> Reconstruction:
    """Attack the exact per-area tables and, beside them, the DP ones (a preview draw at the
    plan's ε, or the tables of the release in `release_dir`).

    Areas with 1..`max_people` people are eligible; at most `max_areas` of them are tried
    (a fixed random choice, the same on every run), each MILP within `seconds_per_area`.
    """
    if max_people < 1 or max_areas < 1 or not seconds_per_area > 0:
        raise DataError("max people, max areas and seconds per area must all be positive.")
    level = level or default_level(plan)
    skipped: tuple[str, ...] = ()
    dp_tables: AreaTables | None = None
    epsilon: float | None = None
    if release_dir is not None:
        load, dp_tables, skipped = release_area_tables(plan, level, release_dir)
        epsilon = _release_epsilon(release_dir)
    else:
        load = workload(plan, level, per_area=per_area)
        skipped = load.left_out
    keep = encoded.codes[level] >= 0
    for column in load.columns:
        keep &= encoded.codes[column] >= 0
    area_of_row = encoded.codes[level][keep].astype(np.int64)
    population = np.bincount(area_of_row, minlength=plan.schema[level].size)
    eligible = np.flatnonzero((population >= 1) & (population <= max_people))
    if release_dir is None and with_dp:  # (it refuses a discovered domain first)
        dp_tables, epsilon = preview_area_tables(plan, load, encoded, rng, per_area=per_area)
    if not len(eligible):  # nothing to attack is no result, never rates of 0
        raise NothingToAttack(level, max_people, finer_levels(plan, level))
    space = RecordSpace.of(plan, load)
    exact_tables = exact_area_tables(plan, load, encoded, keep)
    type_of_row = np.zeros(len(area_of_row), np.int64)
    for column, size in zip(load.columns, space.sizes, strict=True):
        type_of_row = type_of_row * size + encoded.codes[column][keep]
    chooser = np.random.default_rng(0)  # the same areas on every run: figures can be compared
    tried = np.sort(chooser.permutation(eligible)[:max_areas])
    true_types = {
        int(a): np.bincount(type_of_row[area_of_row == a], minlength=space.types) for a in tried
    }
    mix = _prior_mix(type_of_row, space.types)
    cost = -np.log(mix)
    baseline = _baseline(mix, true_types)
    total = len(tried) * (2 if dp_tables is not None else 1)

    def step(offset: int, label: str) -> Callable[[int], None]:
        def report(done: int) -> None:
            if progress is not None:
                progress((offset + done) / max(total, 1), f"{label}: area {done} of {len(tried)}")

        return report

    exact = _attack(
        "exact tables",
        space,
        exact_tables,
        tried,
        true_types,
        True,
        seconds_per_area,
        step(0, "exact tables"),
        cost,
    )
    dp = None
    if dp_tables is not None:
        dp = _attack(
            dp_tables.label,
            space,
            dp_tables,
            tried,
            true_types,
            False,
            seconds_per_area,
            step(len(tried), "DP tables"),
            cost,
        )
        dp = dataclasses.replace(dp, epsilon=epsilon)
    return Reconstruction(
        level=level,
        columns=load.columns,
        tables=load.names,
        areas=int((population >= 1).sum()),
        areas_too_big=int((population > max_people).sum()),
        areas_not_tried=len(eligible) - len(tried),
        rows_left_out=int((~keep).sum()),
        max_people=max_people,
        seconds_per_area=seconds_per_area,
        exact=exact,
        dp=dp,
        baseline_share=baseline,
        skipped_tables=skipped,
    )


def _prior_mix(type_of_row: np.ndarray, types: int) -> np.ndarray:
    """The attacker's prior: the share of each record kind in the whole data (smoothed by ½),
    standing in for a public sample such as a census PUMS file."""
    counts = np.bincount(type_of_row, minlength=types) + 0.5
    mix: np.ndarray = counts / counts.sum()
    return mix


def _baseline(mix: np.ndarray, true_types: dict[int, np.ndarray]) -> float:
    """The share an attacker reproduces with no table at all, knowing only each area's size
    and the prior mix: n·share per record kind, rounded by largest remainder. What the
    tables add is the gap between this and the attack."""
    people = reproduced = 0
    for truth in true_types.values():
        n = int(truth.sum())
        guess = np.floor(mix * n)
        short = n - int(guess.sum())
        if short > 0:
            guess[np.argsort(-(mix * n - guess), kind="stable")[:short]] += 1
        people += n
        reproduced += int(np.minimum(guess, truth).sum())
    return reproduced / people if people else 0.0


def _release_epsilon(release_dir: str | Path) -> float | None:
    import json

    path = Path(release_dir) / "metadata.json"
    try:
        value = json.loads(path.read_text(encoding="utf-8"))["total"]["epsilon"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return float(value) if isinstance(value, int | float) else None
