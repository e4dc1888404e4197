"""The exact LS error model of dprelease.strategy against dense least squares and simulation."""

from __future__ import annotations

import numpy as np
import pytest

from dprelease.strategy.domain import build_domain, downward_closure
from dprelease.strategy.residual import ErrorModel
from helpers.strategy import dense_variances, query_matrix, small_schema

BYS = [("county", "sex"), ("state",), ("sex", "age"), (), ("state", "age"), ("county",), ("age",)]


@pytest.mark.parametrize("seed", range(6))
def test_exact_error_matches_dense_least_squares(seed: int) -> None:
    domain = build_domain(small_schema(), BYS)
    workload = tuple(domain.marginal_of(b) for b in BYS)
    candidates = downward_closure(domain, workload)
    model = ErrorModel(domain, workload, candidates)
    rng = np.random.default_rng(seed)
    precisions = rng.random(len(candidates)) * (rng.random(len(candidates)) < 0.6)
    exact = model.table_variances(precisions)
    dense, cells = dense_variances(domain, candidates, precisions, workload)
    assert np.array_equal(np.isinf(exact), np.isinf(dense))
    finite = np.isfinite(dense)
    np.testing.assert_allclose(exact[finite], dense[finite], rtol=1e-7)
    for table in np.flatnonzero(finite):
        np.testing.assert_allclose(
            model.cell_variances(precisions, int(table)), cells[table], rtol=1e-7
        )


def test_plain_domain_matches_closed_form() -> None:
    """No hierarchy: N_B̄ Σ_{S⊆B} ∏(n_i − 1)/c_S, by hand for sex (2) × age (4)."""
    domain = build_domain(small_schema(), [("sex", "age"), ("sex",)])
    sex_age, sex, total = (0, 0), (0, 1), (1, 1)
    model = ErrorModel(domain, (sex,), (sex_age, total))
    p_sa, p_t = 0.5, 2.0
    c_empty = 1 * p_sa + 8 * p_t  # N_Ā: 1 for sex×age, 2·4 for the total
    c_sex = p_sa
    expected = 4 * (1 / c_empty + 1 / c_sex)  # N_B̄ = 4 (age summed out), n_sex − 1 = 1
    assert model.table_variances(np.array([p_sa, p_t]))[0] == pytest.approx(expected, rel=1e-12)


def test_gradient_matches_finite_differences() -> None:
    domain = build_domain(small_schema(), BYS)
    workload = tuple(domain.marginal_of(b) for b in BYS)
    candidates = downward_closure(domain, workload)
    model = ErrorModel(domain, workload, candidates)
    rng = np.random.default_rng(3)
    p, w = rng.random(len(candidates)) + 0.1, rng.random(len(workload))
    value, grad = model.objective(p, w)
    assert value == pytest.approx(float(w @ model.table_variances(p)), rel=1e-12)
    for j in range(len(candidates)):
        step = np.zeros_like(p)
        step[j] = 1e-6
        numeric = (model.objective(p + step, w)[0] - model.objective(p - step, w)[0]) / 2e-6
        assert grad[j] == pytest.approx(numeric, rel=1e-4, abs=1e-6)


def test_error_matches_simulation() -> None:
    """Draws noise with numpy (a test, not a release), solves LS densely, compares the MSE.

    Fit: the simulated total squared error is within 4 standard errors of the formula.
    Power: the formula off by 20% either way is rejected.
    """
    domain = build_domain(small_schema(), BYS)
    workload = tuple(domain.marginal_of(b) for b in BYS)
    measured = (
        domain.marginal_of(("county", "sex")),
        domain.marginal_of(("sex", "age")),
        domain.marginal_of(("state", "age")),
    )
    precisions = np.array([0.25, 1.0, 0.5])
    model = ErrorModel(domain, workload, measured)
    exact = model.table_variances(precisions)
    queries = [query_matrix(domain, m) for m in measured]
    design = np.vstack(queries)
    weights = np.concatenate(
        [np.full(q.shape[0], p) for q, p in zip(queries, precisions, strict=True)]
    )
    rng = np.random.default_rng(2020)
    truth = rng.integers(0, 50, design.shape[1]).astype(float)
    solver = np.linalg.pinv((design.T * weights) @ design) @ (design.T * weights)
    reps = 4000
    noise = rng.normal(size=(reps, design.shape[0])) / np.sqrt(weights)
    estimates = (design @ truth + noise) @ solver.T
    for table, b in enumerate(workload):
        if not np.isfinite(exact[table]):
            continue
        q = query_matrix(domain, b)
        errors = ((estimates @ q.T - q @ truth) ** 2).sum(axis=1)
        mean, se = errors.mean(), errors.std(ddof=1) / np.sqrt(reps)
        assert abs(mean - exact[table]) < 4 * se, (b, mean, exact[table])
        assert abs(mean - 1.2 * exact[table]) > 4 * se and abs(mean - 0.8 * exact[table]) > 4 * se
