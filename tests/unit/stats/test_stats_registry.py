"""Statistics as registered objects (issue 26): one object per kind and method, asked by the
budget and release code, and the statistic modules imported by the registry only."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dprelease.plan.stat_kinds import METHODS
from dprelease.plan.stat_spec import parse_stat
from dprelease.release.stat_noise import SECURE
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.noise import PreviewNoise
from dprelease.stats.registry import STATISTICS, kind_of
from helpers.imports import imports, modules

STATISTIC_MODULES = {
    "stats.quantile",
    "stats.smooth_quantile",
    "stats.sums",
    "stats.means",
    "stats.aggregate_mean",
    "stats.auto_method",  # issue 38.3: `method: auto` chooses among the others
    "stats.discovery",
    "stats.models",  # regression and PCA (issue 28.4), and the modules they are made of:
    "stats.moments",
    "stats.regression",
    "stats.logistic",
    "stats.pca",
}
"""The statistics themselves (the sparse vector is no plan statistic: release/suggest's)."""


def test_the_statistic_modules_are_imported_by_the_registry_only() -> None:
    found = modules()
    assert set(found) >= STATISTIC_MODULES
    importers = {
        name: sorted(set(imports(path)) & STATISTIC_MODULES)
        for name, path in found.items()
        if name not in STATISTIC_MODULES | {"stats.registry"}
    }
    assert {name: hit for name, hit in importers.items() if hit} == {}


def test_the_registry_holds_exactly_the_plans_methods() -> None:
    assert set(STATISTICS) == {(k, m) for k, methods in METHODS.items() for m in methods}
    for (kind, method), statistic in STATISTICS.items():
        assert (statistic.kind, statistic.method) == (kind, method)


SPECS = {
    ("quantile", "exponential"): {"quantile": [0.25, 0.5], "column": "x", "bounds": [0, 100]},
    ("sum", "clamped"): {"sum": "x", "bounds": [0, 100]},
    ("mean", "clamped"): {"mean": "x", "bounds": [0, 100]},
    ("quantile", "smooth_sensitivity"): {
        "quantile": [0.25, 0.5],
        "column": "x",
        "method": "smooth_sensitivity",
    },
    ("mean", "sample_and_aggregate"): {
        "mean": "x",
        "method": "sample_and_aggregate",
        "bounds": [0, 1000],
        "groups": 20,
    },
    ("quantile", "auto"): {
        "quantile": [0.25, 0.5],
        "column": "x",
        "bounds": [0, 100],
        "method": "auto",
    },
    ("mean", "auto"): {"mean": "x", "bounds": [0, 1000], "method": "auto", "groups": 20},
}
MODELS = {  # one table over all rows, read from every column (issue 28.4)
    ("regression", "linear"): {
        "regression": {"y": "y", "x": ["x"]},
        "bounds": {"x": [0, 100], "y": [0, 1]},
    },
    ("regression", "logistic"): {
        "regression": {"y": "y", "x": ["x"], "family": "logistic"},
        "bounds": {"x": [0, 100]},
    },
    ("pca", "noisy_covariance"): {
        "pca": ["x", "y"],
        "k": 1,
        "bounds": {"x": [0, 100], "y": [0, 1]},
    },
}
SPECS.update(MODELS)
SHARES = [
    Share("pure", epsilon=1.0),
    Share("approx", epsilon=1.0, delta=1e-8),
    Share("advanced", epsilon=1.0),
    Share("zcdp", rho=0.5),
]


def spec_for(key: tuple[str, str]) -> object:
    return parse_stat(SPECS[key], "t")


@pytest.mark.parametrize("key", sorted(STATISTICS))
@pytest.mark.parametrize("share", SHARES, ids=lambda s: s.accounting)
def test_every_statistic_keeps_within_its_share_and_answers(key, share) -> None:
    """The contract every registered statistic keeps, the same checks for each (the
    mechanisms' contract test is the model)."""
    spec = spec_for(key)
    statistic = kind_of(spec)  # type: ignore[arg-type]
    assert STATISTICS[key] is statistic
    if share.accounting == "approx" and not statistic.needs_delta:
        share = Share("approx", epsilon=1.0, delta=0.0)
    mech = statistic.calibrate(spec, share, StatContext())  # type: ignore[arg-type]
    assert mech.cost.amount <= share.amount
    assert (mech.cost.delta or 0.0) <= (share.delta or 0.0)
    error = statistic.error(mech, 0.95)
    assert statistic.curve_moe(error) > 0
    assert statistic.mechanism_name(mech)
    assert set(statistic.sensitivity(mech)) == {"l1", "l2"}
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 100, 500)
    data, cells = StatData(np.repeat([0, 1], 250), values, 2), 2
    if key in MODELS:
        rows = np.column_stack([values, rng.integers(0, 2, 500)]).astype(float)
        data, cells = StatData(np.zeros(500, dtype=np.int64), rows[:, 1], 1, rows=rows), 1
    released = statistic.draw(data, mech, PreviewNoise(rng))
    assert released.shape[0] == cells and np.all(np.isfinite(released))
    secure = statistic.draw(data, mech, SECURE)
    assert secure.shape == released.shape
    assert len(statistic.preview_error(data, mech, 0.05, rng)) == cells
    assert statistic.error_text(error, "95%")


def test_quantile_labels_several_values_per_cell() -> None:
    spec = spec_for(("quantile", "exponential"))
    assert kind_of(spec).csv_labels(spec) == ("0.25", "0.5")  # type: ignore[arg-type]
    single = parse_stat({"quantile": 0.5, "column": "x", "bounds": [0, 1]}, "t")
    assert kind_of(single).csv_labels(single) is None
    assert single.quantiles == (Fraction(1, 2),)  # type: ignore[union-attr]
