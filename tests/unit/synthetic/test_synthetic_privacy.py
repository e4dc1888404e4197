"""Issue 27: the synthetic step reads only the measurements (noisy values), never the data.

Two proofs: (1) inside a real release, what `synthesize` is given is exactly the
post-processing of the release's own noisy measurements, and nothing confidential; (2) in a
process where the data layer cannot be imported at all, the synthetic step runs on published
values alone and gives records that tabulate to them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dprelease.release.draw as draw
from dprelease.data.count import EncodedData, TrueCounts, count, load_data
from dprelease.plan.parse import parse_plan
from dprelease.postprocess.pipeline import postprocess
from dprelease.sample.generator import sample_plan_dict, write_sample
from helpers.cli import child_env


@pytest.fixture(scope="module")
def plan_raw(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("privacy") / "sample.csv"
    write_sample(path, 3000, seed=11)
    raw = sample_plan_dict(str(path))
    kept = ("total", "sex", "age", "race", "age_by_sex", "race_by_hispanic", "education_by_sex")
    raw["tables"] = [t for t in raw["tables"] if t["name"] in kept]  # small: a few seconds
    raw["budget"] = {**raw["budget"], "strategy": "workload"}  # tables measured as listed
    raw["postprocess"] = {**raw["postprocess"], "synthetic": True}
    return raw


def test_synthesize_is_given_only_the_post_processed_measurements(
    plan_raw: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = parse_plan(plan_raw)
    given: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = draw.synthesize

    def spy(*args: Any, **kwargs: Any) -> Any:  # records the inputs, runs the real step
        given.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(draw, "synthesize", spy)
    counts = count(load_data(plan.data_path, plan), plan)  # type: ignore[arg-type]
    release = draw.draw_release(plan, counts, simulations=0)
    assert len(given) == 1
    args, kwargs = given[0]
    values = [*args, *kwargs.values()]
    assert not any(isinstance(v, TrueCounts | EncodedData) for v in values)
    received = args[1]
    noisy = {m.name: m.noisy_counts for m in release.measurements}
    expected = postprocess(plan, release.allocation, noisy, plan.postprocess.effective)
    assert set(received) == {s.name for s in plan.tables}
    for name, cells in received.items():
        assert np.array_equal(cells, expected.released_counts[name]), name
    # Noisy, not the truth. Judged over all cells at once: a one-cell table such as the
    # total can round back to its true count by chance (it did, once in CI).
    names = sorted(received)
    given_cells = np.concatenate([np.ravel(received[n]) for n in names])
    true_cells = np.concatenate([np.ravel(counts.counts[n]) for n in names])
    assert not np.array_equal(given_cells, true_cells)


BLOCKED_RUN = """
import json, sys
import numpy as np
for name in ("dprelease.data", "dprelease.data.count", "dprelease.data.read", "pyarrow"):
    sys.modules[name] = None  # importing the data layer (or a file reader) now fails
from dprelease.plan.parse import parse_plan
from dprelease.synthetic.microdata import synthesize
given = json.loads(sys.stdin.read())
plan = parse_plan(given["plan"])
tables = {name: np.array(cells) for name, cells in given["tables"].items()}
microdata = synthesize(plan, tables)
same = all(
    np.array_equal(microdata.tabulate(plan.schema, s.by), tables[s.name]) for s in plan.tables
)
print(json.dumps({"rows": microdata.rows, "same": same, "missed": len(microdata.mismatches)}))
"""


def test_the_synthetic_step_runs_without_the_data_layer(plan_raw: dict[str, Any]) -> None:
    """Published tables in, records out, in a process that cannot import the data layer."""
    plan = parse_plan(plan_raw)
    counts = count(load_data(plan.data_path, plan), plan)  # type: ignore[arg-type]
    release = draw.draw_release(plan, counts, simulations=0)
    published = {t.name: t.released_counts.tolist() for t in release.tables}
    raw = {**plan_raw, "data": None}
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN],
        input=json.dumps({"plan": raw, "tables": published}),
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=Path(__file__).resolve().parents[3],
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result == {"rows": release.microdata.rows, "same": True, "missed": 0}  # type: ignore[union-attr]
