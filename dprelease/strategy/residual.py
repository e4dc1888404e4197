"""Exact expected error of least-squares reconstruction from noisy marginals (no data needed).

Measurements: marginals A with iid noise of per-cell variance v_A (precision p_A = 1/v_A).
Workload: marginals B. The information matrix F = Σ_A p_A Q_AᵀQ_A is a sum of Kronecker
products; on a plain attribute (two levels) I = P₀ + P₁ and 11ᵀ = n·P₀ with P₀ = 11ᵀ/n,
so F splits over the residual subsets S of the plain attributes (ResidualPlanner, Xiao et al.
2023) into blocks H_S acting on the hierarchy attribute (a scalar when there is none):

    H_S = Σ_{A : S ⊆ A} N_Ā p_A K_{A,h},     N_Ā = ∏_{plain i ∉ A} n_i,

and the total variance of the least-squares estimate of B is

    err_B = N_B̄ Σ_{S ⊆ B} ∏_{i∈S}(n_i − 1) · tr(H_S⁺ K_{B,h})

(infinite when B is not estimable). Without a hierarchy tr(H_S⁺) = 1/c_S with
c_S = Σ_{A ⊇ S} N_Ā p_A. The hierarchy block is inverted exactly by `ChainSolver`.
Per cell: variance = err_B / cells(B) for plain marginals; a hierarchy level adds its
per-group factor (`cell_variances`).

A partial attribute (a discovered domain: rows with rare values are in no cell) splits the
data into *universes*: a marginal that keeps partial attributes U counts only the rows whose
values of U are in their domains, so its sums are not the sums of a marginal without them.
Least squares never links two universes (`dprelease.plan.subtables`), so the rows
(S, level) are kept per universe: a candidate informs, and a table reads, only the rows of its
own universe, where the algebra above holds over the restricted domain. Without partial
attributes there is one universe and nothing changes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from dprelease.errors import PlanError
from dprelease.strategy.chain import ChainSolver
from dprelease.strategy.cost import ModelSize
from dprelease.strategy.domain import Domain, Marginal


def _subsets(items: frozenset[int]) -> list[frozenset[int]]:
    ordered = sorted(items)
    return [
        frozenset(c) for r in range(len(ordered) + 1) for c in itertools.combinations(ordered, r)
    ]


@dataclass(frozen=True, eq=False)
class ErrorModel:
    """The error of a fixed workload as a function of the candidates' precisions.

    `rows` are the pairs (S, hierarchy level); β = `design` @ p gives each row's coefficient,
    `spread` maps row traces to per-workload-table total variances.
    """

    domain: Domain
    workload: tuple[Marginal, ...]
    candidates: tuple[Marginal, ...]
    plain: tuple[int, ...] = field(init=False)
    chain: ChainSolver | None = field(init=False)
    subsets: tuple[tuple[frozenset[int], frozenset[int]], ...] = field(init=False)  # (U, S)
    design: np.ndarray = field(init=False)  # rows × candidates
    spread: np.ndarray = field(init=False)  # workload × rows

    def __post_init__(self) -> None:
        attrs = self.domain.attributes
        plain = tuple(i for i, a in enumerate(attrs) if a.is_plain)
        chains = [i for i, a in enumerate(attrs) if not a.is_plain]
        if len(chains) > 1:
            names = ", ".join(attrs[i].name for i in chains)
            raise PlanError(
                f"The tables use two hierarchies ({names}); the exact error model handles one. "
                "Use strategy: workload."
            )
        chain = ChainSolver(attrs[chains[0]]) if chains else None
        levels = chain.levels if chain else 1
        hier = chains[0] if chains else None

        def split(m: Marginal) -> tuple[frozenset[int], int, int]:
            members = frozenset(i for i in plain if m[i] == 0)
            outside = math.prod(attrs[i].size for i in plain if m[i] != 0)
            return members, outside, (m[hier] if hier is not None else 0)

        def universe(m: Marginal) -> frozenset[int]:
            return frozenset(i for i, a in enumerate(attrs) if a.partial and m[i] < a.total_level)

        subsets: dict[tuple[frozenset[int], frozenset[int]], int] = {}
        for b in self.workload:
            for s in _subsets(split(b)[0]):
                if math.prod(attrs[i].size - 1 for i in s) > 0:
                    subsets.setdefault((universe(b), s), len(subsets))
        design = np.zeros((len(subsets) * levels, len(self.candidates)))
        for j, a in enumerate(self.candidates):
            members, outside, level = split(a)
            for (u, s), k in subsets.items():
                if u == universe(a) and s <= members:
                    design[k * levels + level, j] = outside
        spread = np.zeros((len(self.workload), len(subsets) * levels))
        for j, b in enumerate(self.workload):
            members, outside, level = split(b)
            for s in _subsets(members):
                if (universe(b), s) in subsets:
                    spread[j, subsets[universe(b), s] * levels + level] = outside * math.prod(
                        attrs[i].size - 1 for i in s
                    )
        object.__setattr__(self, "plain", plain)
        object.__setattr__(self, "chain", chain)
        object.__setattr__(self, "subsets", tuple(subsets))
        object.__setattr__(self, "design", design)
        object.__setattr__(self, "spread", spread)

    @property
    def levels(self) -> int:
        return self.chain.levels if self.chain else 1

    @cached_property
    def size(self) -> ModelSize:
        """This model's size, for the work an evaluation costs (`cost.Effort`)."""
        nodes = 0
        if self.chain is not None:
            attribute = self.chain.attribute
            nodes = attribute.level_size(1) + sum(
                attribute.level_size(level) for level in range(1, attribute.total_level + 1)
            )
        return ModelSize(len(self.subsets), self.levels, len(self.candidates), nodes)

    def row_traces(self, precisions: np.ndarray) -> np.ndarray:
        """tr(H_S⁺ K_ℓ) for every row (S, ℓ); inf where not estimable."""
        beta = self.design @ precisions
        if self.chain is None:
            with np.errstate(divide="ignore"):
                return np.where(beta > 0, 1 / np.where(beta > 0, beta, 1), np.inf)
        return self.chain.traces(beta.reshape(-1, self.levels)).ravel()

    def table_variances(self, precisions: Sequence[float] | np.ndarray) -> np.ndarray:
        """err_B: total variance of each workload table's LS estimate (inf if not estimable)."""
        traces = self.row_traces(np.asarray(precisions, dtype=np.float64))
        needed = self.spread > 0
        out = np.where(needed, self.spread, 0) @ np.where(np.isfinite(traces), traces, 0)
        broken = (needed & ~np.isfinite(traces)[None, :]).any(axis=1)
        return np.where(broken, np.inf, out)

    def objective(self, precisions: np.ndarray, weights: np.ndarray) -> tuple[float, np.ndarray]:
        """Σ_B w_B err_B and its gradient in the precisions (convex, homogeneous of degree −1)."""
        mu = weights @ self.spread
        beta = self.design @ precisions
        if self.chain is None:
            if np.any((mu > 0) & (beta <= 0)):
                return math.inf, np.zeros_like(precisions)
            safe = np.where(beta > 0, beta, 1.0)
            value = float(np.sum(np.where(mu > 0, mu / safe, 0)))
            return value, self.design.T @ np.where(mu > 0, -mu / safe**2, 0)
        values, grads = self.chain.values_and_grads(
            beta.reshape(-1, self.levels), mu.reshape(-1, self.levels)
        )
        if not np.all(np.isfinite(values)):
            return math.inf, np.zeros_like(precisions)
        return float(values.sum()), self.design.T @ grads.ravel()

    def cell_variances(self, precisions: np.ndarray, table: int) -> np.ndarray:
        """Variance of each cell of workload table `table`, in its cell order (C order over
        the table's attributes, as `Domain.describe` lists them)."""
        b = self.workload[table]
        attrs = self.domain.attributes
        plain_cells = math.prod(attrs[i].size for i in self.plain if b[i] == 0)
        if self.chain is None:
            total = float(self.table_variances(precisions)[table])
            return np.full(plain_cells, total / plain_cells)
        hier = next(i for i, a in enumerate(attrs) if not a.is_plain)
        level = b[hier]
        beta = (self.design @ precisions).reshape(-1, self.levels)
        factor = np.zeros(attrs[hier].level_size(level))
        for k in range(len(self.subsets)):
            weight = self.spread[table, k * self.levels + level]
            if weight > 0:
                factor += weight * self.chain.cell_variances(beta[k], level)
        per_plain = factor / plain_cells
        # cell order: attributes in domain order, the hierarchy at its position
        before = math.prod(attrs[i].size for i in self.plain if i < hier and b[i] == 0)
        after = plain_cells // before
        return np.broadcast_to(per_plain[None, :, None], (before, per_plain.size, after)).ravel()
