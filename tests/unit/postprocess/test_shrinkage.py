"""Issue 38.1: `postprocess.estimate` (shrunk, least_squares, unbiased): the switch round-trips
through the plan and metadata, the shrunk tables are non-negative, whole and consistent, and
the shrinkage itself keeps what it should."""

import numpy as np
import pytest

from dprelease.errors import PlanError
from dprelease.plan.parse import parse_plan, plan_to_dict
from dprelease.postprocess.consistency import is_consistent, structure
from dprelease.postprocess.shrinkage import model_rank, shrink, sub_table_model
from dprelease.release.draw import draw_preview, draw_release
from dprelease.release.metadata import release_metadata
from helpers.census import census_plan, census_truth
from helpers.plans import plan_dict


@pytest.mark.parametrize("estimate", ["shrunk", "least_squares", "unbiased"])
def test_the_estimate_round_trips_through_the_plan_and_metadata(estimate):
    plan = census_plan(estimate)
    assert plan.postprocess.estimate == estimate
    written = plan_to_dict(plan)["postprocess"]
    # the default is left out, so plans without the key read and write as before
    assert written.get("estimate", "least_squares") == estimate
    assert ("estimate" in written) == (estimate != "least_squares")
    assert parse_plan(plan_to_dict(plan)).postprocess == plan.postprocess
    release = draw_release(plan, census_truth(plan), simulations=0)
    assert release_metadata(release)["postprocess"]["estimate"] == estimate


def test_an_unknown_estimate_is_refused_in_one_line():
    raw = plan_dict()
    raw["postprocess"] = {"estimate": "magic"}
    with pytest.raises(PlanError, match=r"postprocess\.estimate must be one of shrunk"):
        parse_plan(raw)


def test_unbiased_publishes_the_least_squares_estimate_itself():
    plan = census_plan("unbiased")
    assert not plan.postprocess.effective.nonnegative
    preview = draw_preview(plan, census_truth(plan), rng=np.random.default_rng(2))
    assert "nonnegative" not in preview.steps_applied and "integer" not in preview.steps_applied
    fine = next(t for t in preview.tables if t.name == "age_by_sex_by_race")
    # least squares: real-valued, negative where the noise says so, and the measured table
    # moves only by the consistency with the others
    assert (fine.released_counts < 0).any()
    assert not np.array_equal(fine.released_counts, np.round(fine.released_counts))


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_the_shrunk_tables_are_non_negative_whole_and_consistent(seed):
    plan = census_plan("shrunk")
    preview = draw_preview(plan, census_truth(plan), rng=np.random.default_rng(seed))
    released = {t.name: t.released_counts for t in preview.tables}
    for counts in released.values():
        assert (counts >= 0).all() and np.array_equal(counts, np.round(counts))
    _, constraints = structure(plan.schema, tuple(spec.by for spec in plan.tables))
    joined = np.concatenate([released[spec.name] for spec in plan.tables]).astype(np.float64)
    assert is_consistent(constraints, joined, tol=0.0)


def test_the_model_keeps_the_sub_tables_and_shrinkage_keeps_dense_tables():
    plan = census_plan()
    by = ("age", "sex", "race")
    rng = np.random.default_rng(7)
    values = rng.gamma(2.0, 50.0, size=72)
    keys = [("age", "sex")]
    model = sub_table_model(plan.schema, by, values, keys)
    assert np.allclose(model.reshape(18, 4).sum(axis=1), values.reshape(18, 4).sum(axis=1))
    assert np.allclose(model.reshape(18, 4)[:, 0] / model.reshape(18, 4)[:, 1:].sum(axis=1), 1 / 3)
    # rank of {age × sex}: 1 + 8 + 1 + 8 (the sums of 18 cells, spanning 18 dimensions)
    assert model_rank(plan.schema, keys) == 18
    # departures far above the noise (variance 1): the table is kept
    kept, variance = shrink(values, 1.0, model, 18)
    assert np.allclose(kept, values, atol=0.05) and (variance <= 1.0).all()
    # departures that are the noise alone: the estimate moves to the model
    noisy = model + rng.normal(0, 30.0, size=72)
    moved, _ = shrink(noisy, 900.0, model, 18)
    assert np.abs(moved - model).mean() < 0.2 * np.abs(noisy - model).mean()


def test_least_squares_is_the_default_and_shrunk_costs_more_in_admission():
    """Shrinkage leans a sparse table's cells toward a model: opt-in; admission counts it."""
    from dprelease.postprocess.cost import run_ns

    assert census_plan().postprocess.estimate == "least_squares"
    assert run_ns(census_plan("shrunk")) > run_ns(census_plan())
