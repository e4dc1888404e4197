"""Random small releases for admission's resource bound (issue 35): a random plan of
`random_plans` grown with statistics of every kind and method, invariant tables, structural
zeros, synthetic microdata and hierarchies, half the time with up to 220 more tables and 8
more statistics (toward the 10 KB bound), its JSON at most 10 KB, and random rows (at most
10,000) that fit it. Shared by the property test (hypothesis draws) and `bench/bench_admission`
(a seeded random.Random), so both explore the same space."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dprelease.plan.stat_kinds import METHODS, SUMMARY_KINDS
from helpers.random_plans import random_plan

MAX_PLAN_BYTES = 10_000
MAX_ROWS = 10_000
NUMERIC = ("x0", "x1")  # the statistics' columns, uniform on [0, 100]


def _statistic(
    integer: Callable[[int, int], int],
    choose: Callable[[Sequence[Any]], Any],
    by: list[str],
    index: int,
) -> dict[str, Any]:
    kind = choose(SUMMARY_KINDS)
    method = choose(METHODS[kind])
    column = choose(NUMERIC)
    if kind == "quantile":
        stat: dict[str, Any] = {"quantile": choose([0.5, [0.25, 0.75]]), "column": column}
    else:
        stat = {kind: column}
    if method == METHODS[kind][0] or integer(0, 1):
        stat["bounds"] = [0, 100]
    if method != METHODS[kind][0]:
        stat["method"] = method
    return {"name": f"s{index}", "by": by, "stat": stat}


def random_release(
    integer: Callable[[int, int], int],
    choose: Callable[[Sequence[Any]], Any],
    uniform: Callable[[float, float], float],
) -> tuple[dict[str, Any], int]:
    """A plan (every feature at random) and the number of rows to draw for it."""
    raw = random_plan(integer, choose, uniform)
    names = list(raw["columns"])
    tables = raw["tables"]
    for i in range(integer(0, 3)):  # statistics, by 0–2 columns
        by = sorted({choose(names) for _ in range(integer(0, 2))}, key=names.index)
        tables.append(_statistic(integer, choose, by, i))
    bulk = integer(0, 1) == 1
    if bulk:  # toward the 10 KB bound: many more tables and statistics (issue 35)
        for t in range(integer(20, 220)):
            by = sorted({choose(names) for _ in range(integer(1, 3))}, key=names.index)
            tables.append({"name": f"b{t}", "by": by})
        for i in range(integer(0, 8)):
            by = sorted({choose(names) for _ in range(integer(0, 2))}, key=names.index)
            statistic = _statistic(integer, choose, by, 10 + i)
            statistic["stat"]["bounds"] = [0, 100]  # else one of 8 is likely refused for it
            tables.append(statistic)
    # an invariant table (not among many tables: most of them would be its sums, refused)
    if not bulk and integer(0, 3) == 0:
        tables.append({"name": "exact", "by": [choose(names)], "invariant": True})
    if integer(0, 3) == 0:  # a structural zero on a first value
        column = choose(names)
        raw["structural_zeros"] = [{column: [raw["columns"][column]["domain"][0]]}]
    post: dict[str, Any] = {"consistent": choose([True, True, False])}
    if integer(0, 3) == 0:
        post["synthetic"] = True
    raw["postprocess"] = post
    return raw, integer(1, MAX_ROWS)


def plan_bytes(raw: dict[str, Any]) -> int:
    return len(json.dumps(raw).encode())


def write_rows(raw: dict[str, Any], rows: int, path: Path, seed: int) -> None:
    """Rows whose values lie in the plan's domains (structural zeros left empty of rows)."""
    import numpy as np

    generator = np.random.default_rng(seed)
    columns = raw["columns"]
    data: dict[str, Any] = {}
    for name, column in columns.items():
        domain = column["domain"]
        data[name] = np.asarray(domain, dtype=object)[generator.integers(0, len(domain), rows)]
    for zero in raw.get("structural_zeros", []):
        for name, values in zero.items():
            domain = columns[name]["domain"]
            other = [v for v in domain if v not in values] or domain
            data[name] = np.where(np.isin(data[name], values), other[0], data[name])
    for name in NUMERIC:
        data[name] = np.round(generator.uniform(0, 100, rows), 2)
    for child in [n for n, c in columns.items() if "parent" in c]:  # parents follow children
        mapping = columns[child]["parent_map"]
        data[columns[child]["parent"]] = np.asarray([mapping[v] for v in data[child]], object)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(list(data))
    writer.writerows(zip(*data.values(), strict=True))
    path.write_text(out.getvalue())


def release_in_process(raw: dict[str, Any], data: Path) -> None:
    """The release with no ledger, through the library's one release flow."""
    from dprelease.plan.parse import parse_plan
    from dprelease.release.service import ReleaseRequest, release_plan
    from dprelease.release.sources import FileData

    release_plan(ReleaseRequest(parse_plan(raw), FileData(str(data)), charge=False))


def plan_in_process(raw: dict[str, Any]) -> None:
    """What `plan` does: parse, admit, allocate."""
    from dprelease.plan.parse import parse_plan
    from dprelease.release.admitted import admit_plan
    from dprelease.stats.allocation import allocate

    plan = parse_plan(raw)
    admit_plan(plan)
    allocate(plan)
