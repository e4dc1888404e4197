"""Post-processing on the bundled sample (consistent on) and through the command line."""

import json

import numpy as np
import pytest

from dprelease.accounting.allocation import allocate
from dprelease.data.count import count, load_data
from dprelease.plan.model import Postprocess
from dprelease.plan.parse import load_plan, parse_plan, plan_to_dict
from dprelease.postprocess.accuracy import TableAccuracy, accuracy_after_postprocessing
from dprelease.release.draw import draw_preview
from helpers.cli import SAMPLE_PLAN, run
from helpers.postprocess import assert_consistent, children_sum

pytestmark = pytest.mark.slow
SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def consistent_sample():
    raw = load_plan(SAMPLE_PLAN)
    mapping = plan_to_dict(raw)
    mapping["postprocess"]["consistent"] = True
    # consistency over the tables as listed (the earlier bundled budget): what these tests check
    mapping["budget"].update(accounting="zcdp", allocation="weighted", strategy="workload")
    plan = parse_plan(mapping, base_dir=raw.base_dir)
    return plan, count(load_data(plan.data_path, plan), plan)


def test_sample_is_consistent_nonnegative_whole_and_more_accurate(consistent_sample):
    plan, truth = consistent_sample
    raw_sq = post_sq = 0.0
    for seed in SEEDS:
        preview = draw_preview(plan, truth, rng=np.random.default_rng(seed))
        assert preview.steps_applied == ("consistent", "clamp", "nonnegative", "integer")
        out = {t.name: t.released_counts for t in preview.tables}
        for values in out.values():
            assert values.dtype == np.int64 and values.min() >= 0
        assert_consistent(plan, out, exact=True)
        # counties sum to states, for both tables measured at both levels
        by_state = children_sum(plan, out["county"], "county", ("county",))
        assert np.array_equal(by_state, out["state"])
        by_state_sex = children_sum(plan, out["county_by_sex"], "county", ("county", "sex"))
        assert np.array_equal(by_state_sex, out["state_by_sex"])
        assert np.array_equal(out["age_by_sex"].reshape(-1, 2).sum(0), out["sex"])
        for table in preview.tables:
            true = truth.counts[table.name]
            raw_sq += float(np.sum((table.noisy_counts - true) ** 2.0))
            post_sq += float(np.sum((table.released_counts - true) ** 2.0))
    assert post_sq < 0.5 * raw_sq


def test_least_squares_lowers_the_error_of_every_large_table(consistent_sample):
    plan, truth = consistent_sample
    only = Postprocess(clamp=(None, None), nonnegative=False, integer=False, consistent=True)
    mapping = plan_to_dict(plan)
    mapping["postprocess"] = {"clamp": [None, None], "nonnegative": False, "integer": False,
                              "consistent": True}  # fmt: skip
    plan_only = parse_plan(mapping, base_dir=plan.base_dir)
    assert plan_only.postprocess == only
    raw = {t.name: 0.0 for t in plan.tables}
    post = dict(raw)
    for seed in SEEDS:
        preview = draw_preview(plan_only, truth, rng=np.random.default_rng(seed))
        for table in preview.tables:
            true = truth.counts[table.name]
            raw[table.name] += float(np.mean((table.noisy_counts - true) ** 2.0))
            post[table.name] += float(np.mean((table.released_counts - true) ** 2.0))
    for spec in plan.tables:
        if spec.cells(plan.schema) >= 50:
            assert post[spec.name] < raw[spec.name], spec.name


def test_accuracy_simulation_reports_every_table(consistent_sample):
    plan, truth = consistent_sample
    allocation = allocate(plan)
    preview = draw_preview(plan, truth, allocation, rng=np.random.default_rng(7))
    noisy = {t.name: t.noisy_counts for t in preview.tables}
    accuracy = accuracy_after_postprocessing(
        plan, allocation, noisy, simulations=4, rng=np.random.default_rng(8)
    )
    assert set(accuracy) == {s.name for s in plan.tables}
    for name, entry in accuracy.items():
        assert isinstance(entry, TableAccuracy) and entry.simulations == 4
        std = allocation.table(name).noise.std
        if plan.table(name).cells(plan.schema) >= 1000:  # enough cells for a tight estimate
            assert entry.rmse_raw == pytest.approx(std, rel=0.1)
            assert entry.rmse_postprocessed < entry.rmse_raw
            assert abs(entry.bias_raw) < 0.1 * std


def test_cli_release_with_consistency_writes_steps_and_accuracy(tmp_path):
    plan_file = tmp_path / "plan.yaml"
    text = SAMPLE_PLAN.read_text().replace("consistent: false", "consistent: true")
    text = text.replace(
        "data: census_sample.csv", f"data: {SAMPLE_PLAN.parent / 'census_sample.csv'}"
    )
    plan_file.write_text(text)
    out = tmp_path / "release"
    result = run("release", str(plan_file), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "post-processing: consistent, clamp, nonnegative, integer" in result.stdout
    meta = json.loads((out / "metadata.json").read_text())
    post = meta["postprocess"]
    assert post["consistent"] is True
    assert post["steps_applied"] == ["consistent", "clamp", "nonnegative", "integer"]
    assert post["steps_skipped"] == []
    for entry in meta["tables"]:
        accuracy = entry["accuracy"]
        assert set(accuracy) == {
            "rmse_raw", "rmse_postprocessed", "bias_raw", "bias_postprocessed", "simulations",
            "method",
        }  # fmt: skip
        assert accuracy["bias_raw"] == 0.0 and accuracy["method"] == "simulated"
        assert accuracy["simulations"] >= 3
    report = (out / "report.html").read_text()
    assert "Accuracy after post-processing" in report
    assert "consistent, clamp, nonnegative, integer" in report

    # the released tables agree: county rows add up to the state table
    def column_sums(name, key_index):
        rows = (out / "tables" / f"{name}.csv").read_text().splitlines()[1:]
        sums = {}
        for row in rows:
            *labels, value, _moe = row.split(",")
            sums[labels[key_index]] = sums.get(labels[key_index], 0) + int(value)
        return sums

    assert column_sums("county_by_sex", 1) == column_sums("sex", 0)
