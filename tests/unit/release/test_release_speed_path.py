"""The release does only what its plan needs (issue 14's 1 M-row target): the accuracy
simulation's plausible truth is cell by cell when the tables are post-processed cell by cell
(no least squares, no scipy), and the allocation overlaps the read of a small data file
without changing which error is reported."""

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from dprelease.accounting.allocation import allocate
from dprelease.plan.model import Postprocess
from dprelease.postprocess.accuracy import TRUTH_SETTINGS, plausible_truth
from dprelease.release.background import OVERLAP_MAX_BYTES, Background, small_local_file
from helpers.cli import ROOT, SAMPLE_PLAN, run
from helpers.plans import make_plan

CELLWISE = Postprocess(clamp=(None, None), nonnegative=True, integer=True, consistent=False)


def test_cellwise_truth_is_each_measurement_clipped_at_zero_and_rounded():
    plan = make_plan([{"name": "sex", "by": ["sex"]}, {"name": "race", "by": ["race"]}])
    allocation = allocate(plan)
    noisy = {"sex": np.array([-3.0, 2.5]), "race": np.array([3.5, 7.2, -0.4, 0.6])}
    truth, problem = plausible_truth(plan, allocation, noisy, CELLWISE)
    assert problem is None  # no least-squares problem is built
    assert truth["sex"].tolist() == [0, 2]  # max(0, y), halves to even
    assert truth["race"].tolist() == [4, 7, 0, 1]
    assert all(values.dtype == np.int64 for values in truth.values())


def test_consistent_release_keeps_a_consistent_truth():
    plan = make_plan([{"name": "sex", "by": ["sex"]}, {"name": "age_by_sex", "by": ["age", "sex"]}])
    allocation = allocate(plan)
    rng = np.random.default_rng(1)
    noisy = {"sex": rng.normal(90, 5, 2), "age_by_sex": rng.normal(10, 5, 18)}
    truth, problem = plausible_truth(plan, allocation, noisy, TRUTH_SETTINGS)
    assert problem is not None
    by_sex = truth["age_by_sex"].reshape(9, 2).sum(axis=0)  # age × sex, sex fastest
    assert by_sex.tolist() == truth["sex"].tolist()
    assert min(v.min() for v in truth.values()) >= 0


def _pure_sample_plan(tmp_path: Path) -> Path:
    """The bundled sample plan, pure and with the tables as listed, consistency off."""
    text = SAMPLE_PLAN.read_text()
    budget = text[text.index("budget:") : text.index("postprocess:")]
    text = text.replace(budget, "budget: {accounting: pure, epsilon: 1.0, strategy: workload}\n")
    text = text.replace("data: census_sample.csv", f"data: {ROOT / 'data' / 'census_sample.csv'}")
    assert "consistent: false" in text and "nonnegative: true" in text
    plan = tmp_path / "plan.yaml"
    plan.write_text(text)
    return plan


def test_a_whole_release_without_consistency_imports_no_scipy_pandas_or_sklearn(tmp_path):
    # The whole command, accuracy simulation included (it ran least squares and controlled
    # rounding, and so imported scipy, for a plausible truth before issue 14's fix).
    plan, out = _pure_sample_plan(tmp_path), tmp_path / "r.zip"
    code = (
        # nor scikit-learn, which a developer may have (diffprivlib brings it for the
        # benchmarks): OpenDP's prelude imports it (3 s of CPU), so the release does not
        # import the prelude (release/noise.py)
        "import sys\nfrom dprelease.cli import main\n"
        f"status = main(['release', {str(plan)!r}, '--out', {str(out)!r}])\n"
        "print('status', status)\n"
        "top = {m.split('.')[0] for m in sys.modules}\n"
        "print('loaded', sorted({'scipy', 'pandas', 'sklearn'} & top))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert "status 0" in result.stdout, result.stderr
    assert "loaded []" in result.stdout
    import zipfile

    with zipfile.ZipFile(out) as archive:
        meta = json.loads(archive.read("metadata.json"))
    for entry in meta["tables"]:
        assert entry["accuracy"]["method"] == "simulated"
        assert entry["accuracy"]["simulations"] == 20


def test_background_returns_the_value_or_raises_the_error_on_every_ask():
    seen: list[str] = []
    done = Background(lambda: seen.append(threading.current_thread().name) or 42)
    assert done.result() == 42 and done.result() == 42
    assert seen[0] != threading.main_thread().name  # it ran on another thread

    def fail() -> int:
        raise ValueError("no")

    failed = Background(fail)
    for _ in range(2):
        with pytest.raises(ValueError, match="no"):
            failed.result()
    at_once = Background(lambda: threading.current_thread().name, overlap=False)
    assert at_once.result() == threading.main_thread().name


def test_only_a_small_local_file_is_read_alongside_the_allocation(tmp_path):
    small = tmp_path / "small.csv"
    small.write_text("a\n1\n")
    big = tmp_path / "big.csv"
    with big.open("wb") as handle:  # sparse: no disk is used
        handle.truncate(OVERLAP_MAX_BYTES + 1)
    assert small_local_file(small) and small_local_file(str(small))
    assert not small_local_file(big)
    assert not small_local_file(tmp_path)  # a folder of parts
    assert not small_local_file(tmp_path / "missing.csv")
    assert not small_local_file("hdfs:///census/persons")
    assert not small_local_file(None)


@pytest.mark.parametrize("data", ["no_sex_column.csv", "missing.csv"])
def test_a_budget_problem_is_still_the_error_reported(tmp_path, data):
    # The data's own problem (a missing column, a missing file) comes second: the allocation
    # runs alongside the read, and its error wins, as when it ran first.
    (tmp_path / "no_sex_column.csv").write_text("age\n30\n")
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "version: 1\ncolumns:\n  sex: {kind: categorical, domain: [Female, Male]}\n"
        "tables:\n  - {name: sex, by: [sex], weight: 0}\n"
        "budget: {accounting: pure, epsilon: 1, allocation: weighted, strategy: workload}\n"
    )
    result = run("release", str(plan), "--data", str(tmp_path / data), "--out", str(tmp_path / "o"))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: Table 'sex' has weight 0 and would get no budget; give it a weight above 0 or "
        "remove it."
    ]
    assert not (tmp_path / "o").exists()
