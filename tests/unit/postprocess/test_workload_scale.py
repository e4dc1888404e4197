"""Issue 35, finding 9 (in part): the workload of 220 three-way tables over 12 two-valued
columns made 5 M calls of `closure` (about 2 s of CPU per workload, built several times per
release). Each key's closure and each pair of keys are now handled once; the keys, the
representatives, the links and the predecessors are those the plain rules give."""

from __future__ import annotations

import itertools
import time

from dprelease.plan.parse import loads_plan
from dprelease.plan.subtables import Workload, determines, reduce_key, shared_key

COLUMNS = [f"c{i}" for i in range(12)]


def _plan_text() -> str:
    lines = ["columns:"]
    lines += [f"  {c}: {{kind: categorical, domain: [a, b]}}" for c in COLUMNS]
    lines.append("tables:")
    for combo in itertools.combinations(COLUMNS, 3):
        lines.append(f"  - {{name: {'_'.join(combo)}, by: [{', '.join(combo)}]}}")
    return "\n".join([*lines, "budget: {epsilon: 1}"]) + "\n"


def test_a_workload_of_220_three_way_tables_is_quick_and_the_same() -> None:
    plan = loads_plan(_plan_text(), "yaml")
    bys = tuple(spec.by for spec in plan.tables)
    start = time.process_time()
    workload = Workload(plan.schema, bys)
    links = workload.links()
    took = time.process_time() - start
    assert took < 1.0, took  # about 0.2 s; before: about 2 s (more under load)
    schema = plan.schema
    keys = {reduce_key(schema, by) for by in bys}  # the plain closure under "shared by"
    while True:
        more = {shared_key(schema, a, b) for a in keys for b in keys} - {None} - keys
        if not more:
            break
        keys |= more  # type: ignore[arg-type]
    assert set(workload.keys) == keys
    expected = [
        (t, key, workload.representative[key])
        for t in range(len(bys))
        for key in workload.keys
        if determines(schema, bys[t], key) and workload.representative[key] != t
    ]
    assert links == expected
    for key in workload.keys[:40]:
        below = [k for k in workload.keys if k != key and determines(schema, key, k)]
        plain = tuple(
            k for k in below if not any(o != k and determines(schema, o, k) for o in below)
        )
        assert workload.predecessors(key) == plain
