"""Issue 35: one admission. Every stage registers its estimator; `admit` refuses in one line
naming the limit, before anything is charged; finding 9's plans are admitted on a cheaper
accuracy path and released within the bound."""

from __future__ import annotations

import itertools

import pytest

from dprelease import admission
from dprelease.admission import DataSize, Estimate, admit
from dprelease.errors import ResourceError
from dprelease.plan.parse import loads_plan
from dprelease.postprocess.accuracy import simulations_within
from dprelease.release.admitted import RELEASE_STAGES, admit_plan
from helpers.cli import run as run_cli


def _plan_text(columns: int, width: int) -> str:
    names = [f"c{i}" for i in range(columns)]
    lines = ["columns:"] + [f"  {c}: {{kind: categorical, domain: [a, b]}}" for c in names]
    lines.append("tables:")
    for combo in itertools.combinations(names, width):
        lines.append(f"  - {{name: {'_'.join(combo)}, by: [{', '.join(combo)}]}}")
    return "\n".join([*lines, "budget: {epsilon: 1}"]) + "\n"


def test_every_stage_of_a_release_is_registered() -> None:
    assert set(RELEASE_STAGES) <= set(admission.STAGES)
    plan = loads_plan(_plan_text(4, 2), "yaml")
    admitted = admit(plan, DataSize(rows=2_000), RELEASE_STAGES)
    assert [e.stage for e in admitted.estimates] == list(RELEASE_STAGES)
    assert admitted.path("consistency") == "consistent"


def test_a_stage_over_the_total_is_refused_in_one_line_naming_the_limit(monkeypatch) -> None:
    def heavy(plan, data):  # type: ignore[no-untyped-def]
        return Estimate("heavy", 10**12, 0, "HEAVY_LIMIT")

    monkeypatch.setitem(admission.STAGES, "heavy", heavy)
    with pytest.raises(ResourceError) as refused:
        admit(None, None, ["heavy"])
    message = str(refused.value)
    assert "\n" not in message and "ADMISSION_WORK_NS" in message and "HEAVY_LIMIT" in message


def test_finding_9s_plans_take_no_accuracy_simulation_they_cannot_afford() -> None:
    """220 three-way tables: one post-processing run is estimated at ~3 s, so the accuracy
    simulation (20 reruns, at least 3 whatever the time before: ~12 s of the 16 s left after
    the CG fix) is not run; 276 pairs afford 3 reruns."""
    triples = loads_plan(_plan_text(12, 3), "yaml")
    pairs = loads_plan(_plan_text(24, 2), "yaml")
    assert simulations_within(triples) == 0
    assert simulations_within(pairs) < 20
    assert admit_plan(triples).path("accuracy").startswith("no simulation")


def test_an_overlapping_plan_beyond_consistencys_work_is_refused_at_plan(tmp_path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(_plan_text(16, 3))  # 560 three-way tables: ~14 s a consistent run
    result = run_cli("plan", str(path))
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "CONSISTENCY_WORK_NS" in lines[0], result.stderr
