"""The strategy: which marginals to measure, with which noise, and each table's exact error.

`select_strategy` is a pure function of public inputs (schema, tables, sensitivity, budget):

- strategy "workload" measures the tables as listed (each distinct marginal once);
- strategy "auto" may also measure anything the tables determine (the downward closure of
  the workload: coarser tables, totals, hierarchy levels) and drops what gets no budget;
  under pure DP also the union of two measured marginals where it beats them (`merge`).

In both, the budget is split to minimise Σ_B w_B err_B of the least-squares estimates
(`residual.ErrorModel`), then rounded so that the exact sum never exceeds the total:
zcdp ρ_A = Δ₂² p_A/2 with Σ ρ_A ≤ ρ(ε, δ); approx u_A = Δ₂²/σ_A² with Σ u_A ≤ 1/σ*², σ* the
analytic-Gaussian σ of sensitivity 1 at (ε, δ) (the whole set is one Gaussian mechanism);
pure Σ ε_A ≤ ε. The reported errors use each mechanism's exact variance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Generic, Literal, Protocol, TypeVar

import numpy as np

from dprelease.errors import PlanError, quote
from dprelease.plan.schema import Schema
from dprelease.plan.table_spec import Sensitivity
from dprelease.strategy.cost import Effort, excess, fits, model_size, too_large
from dprelease.strategy.disk_memo import candidate_shares_ok, disk_memo, shares_ok
from dprelease.strategy.domain import Domain, Marginal, build_domain, downward_closure
from dprelease.strategy.merge import merged_epsilon_shape
from dprelease.strategy.optimise import (
    epsilon_shape,
    laplace_value,
    precision_shape,
    sparsest_epsilon_shape,
)
from dprelease.strategy.residual import ErrorModel
from dprelease.strategy.shared_cache import shared_lru_cache

StrategyAccounting = str  # the name of an accountant that `chooses_strategy`
StrategyKind = Literal["auto", "workload"]
_NEGLIGIBLE = 1e-9  # of the largest share


class NoiseLike(Protocol):
    """What the strategy reads of a measurement's noise: its variance per cell."""

    @property
    def variance(self) -> float: ...


N = TypeVar("N", bound=NoiseLike)


class StrategyAccountant(Protocol[N]):
    """What the strategy needs of an accountant (`dprelease.accounting.accountants`): its
    name, the shape its shares are optimised for (L1 Laplace or L2 Gaussian noise) and the
    noise that rounded shares buy. The accountant is handed in, so the strategy imports
    nothing of accounting/ (the layers: accounting/ asks the strategy, never the reverse)."""

    @property
    def name(self) -> str: ...

    @property
    def strategy_shape(self) -> Literal["laplace", "gaussian"]: ...

    def strategy_noises(
        self,
        shape: Sequence[float],
        sens: Sensitivity,
        epsilon: float,
        delta: float | None,
        rho: float | None,
    ) -> tuple[list[float], list[N], float | None]: ...


@dataclass(frozen=True)
class WorkloadTable:
    """A published table as the strategy sees it: its name, columns and weight."""

    name: str
    by: tuple[str, ...]
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.weight) and self.weight >= 0):
            raise PlanError(f"Table {quote(self.name)}: weight must be a finite number ≥ 0.")


@dataclass(frozen=True)
class MeasuredMarginal(Generic[N]):
    """One marginal the release measures, its budget share and its noise (all public).

    `share` is in the accountant's additive unit: ε (pure), ρ (zcdp), u = Δ₂²/σ² (approx).
    """

    name: str
    by: tuple[str, ...]
    cells: int
    noise: N
    share: float
    sensitivity: Sensitivity


@dataclass(frozen=True)
class TableAccuracy:
    """A published table's exact expected error after least-squares reconstruction."""

    name: str
    cells: int
    total_variance: float  # Σ over cells of the LS estimate's variance
    expected_rmse: float  # √(total_variance / cells)


@dataclass(frozen=True)
class Strategy(Generic[N]):
    """What to measure and what it buys, under one accountant."""

    accounting: StrategyAccounting
    kind: StrategyKind
    epsilon: float
    delta: float | None
    rho: float | None  # the zCDP total (zcdp only)
    measurements: tuple[MeasuredMarginal[N], ...]
    tables: tuple[TableAccuracy, ...]
    workload_error: float  # Σ_B w_B · total_variance_B / cells_B (weighted per-cell MSE)

    def table(self, name: str) -> TableAccuracy:
        return next(t for t in self.tables if t.name == name)


@lru_cache(maxsize=64)
def _model(domain: Domain, workload: tuple[Marginal, ...], kind: StrategyKind) -> ErrorModel:
    """The error model over the downward closure (`auto`) or the tables' own marginals, the
    latter also under `auto` when the closure's model would not fit the bound (`cost`);
    `StrategyTooLarge` when not even that fits."""
    distinct = tuple(dict.fromkeys(workload))
    if kind == "auto" and fits(model_size(domain, workload, auto=True)):
        return _model_over(domain, workload, downward_closure(domain, distinct))
    size = model_size(domain, workload, auto=False)
    if not fits(size):
        raise too_large(size)
    return _model_over(domain, workload, distinct)


def bound_note(schema: Schema, tables: Sequence[WorkloadTable]) -> str | None:
    """Why `strategy: auto` chose among the tables' own marginals only (None: it searched
    every marginal they determine, or the tables are measured as listed anyway)."""
    try:
        domain, workload, _ = _workload(schema, tables)
    except PlanError:
        return None
    size = model_size(domain, workload, auto=True)
    if fits(size) or not fits(model_size(domain, workload, auto=False)):
        return None
    return (
        "strategy: auto chose among the tables' own marginals only: searching every marginal "
        f"they determine would need {excess(size)}."
    )


@lru_cache(maxsize=64)
def _model_over(
    domain: Domain, workload: tuple[Marginal, ...], candidates: tuple[Marginal, ...]
) -> ErrorModel:
    return ErrorModel(domain, workload, candidates)


def _start(model: ErrorModel, weights: np.ndarray) -> np.ndarray:
    """The workload's own marginals, weighted as listed: the baseline every shape must beat."""
    start = np.zeros(len(model.candidates))
    for marginal, weight in zip(model.workload, weights, strict=True):
        start[model.candidates.index(marginal)] += weight
    return start


def _gaussian_ok(args: tuple[Any, ...], shape: Any) -> bool:
    domain, workload, _, kind = args
    return shares_ok(shape) and len(shape) == len(_model(domain, workload, kind).candidates)


@lru_cache(maxsize=64)
@disk_memo("gaussian_shape", _gaussian_ok)  # the same search in every process: kept on disk
def _gaussian_shape(
    domain: Domain, workload: tuple[Marginal, ...], weights: tuple[float, ...], kind: StrategyKind
) -> tuple[float, ...]:
    """The budget-free precision shape (cached per table set: what-ifs on ε reuse it)."""
    model = _model(domain, workload, kind)
    w = np.asarray(weights)
    listed = _start(model, w)
    effort = Effort()
    best = precision_shape(model, w, listed, effort=effort)
    if kind == "auto" and not effort.exhausted:
        spread = precision_shape(model, w, listed / listed.sum() + 1.0 / len(listed), effort=effort)
        if model.objective(spread, w)[0] < model.objective(best, w)[0]:
            best = spread
    return tuple(float(x) for x in best)


@shared_lru_cache(maxsize=64)  # the release's count and allocation threads both ask
@disk_memo("laplace_free_shape", lambda args, found: candidate_shares_ok(args[0], found))
def _laplace_free_shape(
    domain: Domain, workload: tuple[Marginal, ...], weights: tuple[float, ...], kind: StrategyKind
) -> tuple[tuple[Marginal, ...], tuple[float, ...]]:
    """Candidates and their ε shares for continuous Laplace noise (variance 2Δ²/ε²):
    scale-free, cached per table set. `auto` may add unions of two measured marginals."""
    model = _model(domain, workload, kind)
    w = np.asarray(weights)
    gaussian = np.asarray(_gaussian_shape(domain, workload, weights, kind))
    starts = [np.sqrt(gaussian), _start(model, w)]
    effort = Effort()
    shapes = [epsilon_shape(model, w, 1, 1.0, s, exact=False, effort=effort) for s in starts]
    values = [laplace_value(model, w, x) for x in shapes]
    best = sparsest_epsilon_shape(model, w, shapes[int(np.argmin(values))], effort=effort)
    candidates = model.candidates
    if kind == "auto":
        candidates, best = merged_epsilon_shape(domain, workload, w, candidates, best, effort)
    return candidates, tuple(float(x) for x in best)


@lru_cache(maxsize=256)
def _laplace_shape(
    domain: Domain,
    workload: tuple[Marginal, ...],
    weights: tuple[float, ...],
    kind: StrategyKind,
    l1: int,
    epsilon: float,
) -> tuple[tuple[Marginal, ...], tuple[float, ...]]:
    """Candidates and ε shares under pure DP: the scale-free Laplace optimum, polished with
    the exact discrete-Laplace variance where some scale is small enough for the two to differ."""
    candidates, free = _laplace_free_shape(domain, workload, weights, kind)
    model = _model_over(domain, workload, candidates)
    w = np.asarray(weights)
    rough = np.asarray(free)
    # The polish buys second-order gains from the DL variance falling below 2b² (by ~1/12b²):
    # measured on the sample plan, a workload MSE lower by 1e-6 at b = 2.6, 5e-5 at b = 1.04,
    # 6e-4 at b = 0.5. Above b = 2 (under 1e-5) it is not worth its ms in every ε what-if.
    if l1 > 2 * epsilon * rough.max():  # b = Δ₁/ε_A > 2 (no division: ε can be 5e-324)
        return candidates, free
    polished = epsilon_shape(model, w, l1, epsilon, rough, exact=True, effort=Effort())
    if _pure_value(model, w, l1, epsilon, polished) <= _pure_value(model, w, l1, epsilon, rough):
        return candidates, tuple(float(x) for x in polished)
    return candidates, free


def _pure_value(model: ErrorModel, w: np.ndarray, l1: int, epsilon: float, x: np.ndarray) -> float:
    p = 2 * np.sinh(x * epsilon / (2 * l1)) ** 2
    return model.objective(p, w)[0]


def select_strategy(
    schema: Schema,
    tables: Sequence[WorkloadTable],
    sens: Sensitivity,
    accountant: StrategyAccountant[N],
    epsilon: float,
    delta: float | None = None,
    kind: StrategyKind = "auto",
    *,
    rho: float | None = None,
) -> Strategy[N]:
    """Measurements, their noise, and every table's exact expected LS error, under the
    accountant (an object of `dprelease.accounting.accountants`).

    Under zcdp the total ρ is `rho` when given, else ρ(ε, δ) by the CKS bound."""
    if not tables:
        raise PlanError("The plan has no tables to measure.")
    domain, workload, weights = _workload(schema, tables)
    if accountant.strategy_shape == "laplace":
        candidates, shape = _laplace_shape(domain, workload, weights, kind, sens.l1, epsilon)
        model = _model_over(domain, workload, candidates)
    else:
        model = _model(domain, workload, kind)
        shape = _gaussian_shape(domain, workload, weights, kind)
    # a share this small buys nothing and its noise (1/share) would overflow the estimates;
    # leaving it unspent costs at most 1e-9 of the budget
    floor = _NEGLIGIBLE * max(shape)
    used = [j for j, q in enumerate(shape) if q > floor]
    # the accountant rounds the shape into shares that fit exactly, and prices their noise
    shares, noises, total_rho = accountant.strategy_noises(
        [shape[j] for j in used], sens, epsilon, delta, rho
    )
    precisions = np.zeros(len(model.candidates))
    for j, noise in zip(used, noises, strict=True):
        precisions[j] = 1 / noise.variance
    totals = model.table_variances(precisions)
    measurements = tuple(
        MeasuredMarginal(
            name=_measurement_name(domain, model.candidates[j]),
            by=domain.describe(model.candidates[j]),
            cells=domain.marginal_cells(model.candidates[j]),
            noise=noise,
            share=share,
            sensitivity=sens,
        )
        for j, share, noise in zip(used, shares, noises, strict=True)
    )
    accuracy = tuple(
        TableAccuracy(
            name=t.name,
            cells=domain.marginal_cells(m),
            total_variance=float(v),
            expected_rmse=math.sqrt(v / domain.marginal_cells(m)),
        )
        for t, m, v in zip(tables, workload, totals, strict=True)
    )
    strategy = Strategy(
        accounting=accountant.name,
        kind=kind,
        epsilon=epsilon,
        delta=delta,
        rho=total_rho,
        measurements=measurements,
        tables=accuracy,
        workload_error=float(
            np.dot([t.weight / a.cells for t, a in zip(tables, accuracy, strict=True)], totals)
        ),
    )
    if kind == "auto":
        # The optimiser's shape (esp. the pure one, fitted to the continuous Laplace) can land
        # above the tables as listed; never return worse than measuring them as listed.
        listed = select_strategy(
            schema, tables, sens, accountant, epsilon, delta, "workload", rho=rho
        )
        if listed.workload_error < strategy.workload_error:
            return replace(listed, kind="auto")
    return strategy


def _workload(
    schema: Schema, tables: Sequence[WorkloadTable]
) -> tuple[Domain, tuple[Marginal, ...], tuple[float, ...]]:
    """The domain, the tables as marginals, and their objective weights."""
    domain = build_domain(schema, [t.by for t in tables])
    workload = tuple(domain.marginal_of(t.by) for t in tables)
    top = max(t.weight for t in tables)
    if top <= 0:
        raise PlanError("Every table has weight 0; give at least one a weight above 0.")
    # per-cell MSE, weighted (as `allocation: optimal` does): a big table does not starve
    # the small ones
    weights = tuple(
        max(t.weight, 1e-6 * top) / domain.marginal_cells(m)
        for t, m in zip(tables, workload, strict=True)
    )
    return domain, workload, weights


def pure_unions(schema: Schema, tables: Sequence[WorkloadTable]) -> tuple[tuple[str, ...], ...]:
    """The marginals `strategy: auto` may measure under pure DP that no table determines
    (unions of two tables, `merge`): a release must count them from the data."""
    if not tables:
        return ()
    domain, workload, weights = _workload(schema, tables)
    candidates, shares = _laplace_free_shape(domain, workload, weights, "auto")
    return tuple(
        domain.describe(c)
        for c, share in zip(candidates, shares, strict=True)
        if share > 0 and not any(domain.determines(b, c) for b in workload)
    )


def _measurement_name(domain: Domain, marginal: Marginal) -> str:
    by = domain.describe(marginal)
    return "_by_".join(by) if by else "total"
