"""The information matrix of one hierarchy attribute, inverted exactly by Woodbury.

Within one residual subset S of the plain attributes, the least-squares information matrix
acts on a hierarchy attribute (county → state → summed out) as

    H = Σ_ℓ β_ℓ K_ℓ,   K_ℓ = G_ℓ G_ℓᵀ (G_ℓ the group indicators of level ℓ; K_0 = I, K_L = 11ᵀ).

Let ℓ* be the finest level with β > 0. Everything measured is constant on ℓ*-groups, so
H = G* H' G*ᵀ with H' = a·I + U C Uᵀ on the ℓ*-groups (a = β_ℓ*, U = [E_m]_{m>ℓ*} the coarser
levels' indicators of ℓ*-groups, C = diag(β_m)), and for a query at level m ≥ ℓ*
tr(H⁺ K_m) = tr(E_mᵀ H'⁻¹ E_m) (queries finer than ℓ* are not estimable: infinite).
Woodbury: H'⁻¹ = (I − U X Uᵀ)/a with X = C (aI + TC)⁻¹, T = UᵀU (small: one column per
coarser group). With Y = (I − XT)/a:
    tr at ℓ*:  (n* − tr(XT))/a;       tr at m > ℓ*:  Σ_{block m} diag(T Y);
    ∂/∂a  of tr(H'⁻¹M) = −[μ* (n* − 2 tr(XT) + tr(XTXT))/a² + tr(YᵀTY D)];
    ∂/∂β_m of tr(H'⁻¹M) = −Σ_{block m} diag(μ* YᵀTY + TY D TY),
where M = μ* I + U D Uᵀ weights the queries (D = diag(μ_m)).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dprelease.errors import InternalError
from dprelease.strategy.domain import Attribute


@dataclass(frozen=True, eq=False)
class _Reduced:
    """The hierarchy seen from level ℓ*: its groups and the coarser levels' indicators."""

    groups: int  # n*: number of ℓ*-groups
    blocks: tuple[slice, ...]  # the columns of U that belong to each coarser level
    indicator: np.ndarray  # U: n* × Σ g_m, 0/1
    gram: np.ndarray  # T = UᵀU


def _reduce(attribute: Attribute, start: int) -> _Reduced:
    if start == attribute.total_level:
        return _Reduced(1, (), np.zeros((1, 0)), np.zeros((0, 0)))
    finest = np.asarray(attribute.groups[start])
    count = int(finest.max()) + 1
    representative = np.zeros(count, dtype=np.int64)
    representative[finest] = np.arange(finest.size)  # any member of each ℓ*-group
    columns, blocks, offset = [], [], 0
    for level in range(start + 1, attribute.total_level + 1):
        if level == attribute.total_level:
            codes = np.zeros(count, dtype=np.int64)
        else:
            codes = np.asarray(attribute.groups[level])[representative]
        width = int(codes.max()) + 1
        block = np.zeros((count, width))
        block[np.arange(count), codes] = 1.0
        columns.append(block)
        blocks.append(slice(offset, offset + width))
        offset += width
    indicator = np.hstack(columns)
    return _Reduced(count, tuple(blocks), indicator, indicator.T @ indicator)


@dataclass(frozen=True, eq=False)
class ChainSolver:
    """Exact traces, gradients, diagonals and solves for one hierarchy attribute."""

    attribute: Attribute
    _reduced: dict[int, _Reduced] = field(default_factory=dict, init=False, repr=False)

    @property
    def levels(self) -> int:
        return self.attribute.total_level + 1

    def reduced(self, start: int) -> _Reduced:
        found = self._reduced.get(start)
        if found is None:
            found = _reduce(self.attribute, start)
            self._reduced[start] = found
        return found

    def _parts(self, beta: np.ndarray) -> tuple[int, _Reduced, float, np.ndarray, np.ndarray] | None:
        positive = np.flatnonzero(beta > 0)
        if positive.size == 0:
            return None
        start = int(positive[0])
        red = self.reduced(start)
        a = float(beta[start])
        c = np.concatenate([np.full(b.stop - b.start, beta[start + 1 + k]) for k, b in enumerate(red.blocks)]) if red.blocks else np.zeros(0)
        # X = C (aI + TC)⁻¹, symmetric; solved as (aI + CT)⁻¹ C
        x = np.linalg.solve(a * np.eye(c.size) + c[:, None] * red.gram, np.diag(c)) if c.size else np.zeros((0, 0))
        return start, red, a, c, x

    def traces(self, beta: np.ndarray) -> np.ndarray:
        """tr(H⁺ K_ℓ) for every level ℓ (inf where not estimable)."""
        out = np.full(self.levels, np.inf)
        parts = self._parts(beta)
        if parts is None:
            return out
        start, red, a, _, x = parts
        xt = x @ red.gram
        ty = (red.gram - red.gram @ xt) / a  # T Y
        out[start] = (red.groups - np.trace(xt)) / a
        diag = np.diag(ty)
        for k, block in enumerate(red.blocks):
            out[start + 1 + k] = diag[block].sum()
        return out

    def value_and_grad(self, beta: np.ndarray, mu: np.ndarray) -> tuple[float, np.ndarray]:
        """f = Σ_ℓ μ_ℓ tr(H⁺ K_ℓ) and ∂f/∂β (0 at levels finer than ℓ*)."""
        grad = np.zeros(self.levels)
        parts = self._parts(beta)
        if parts is None or np.any(mu[: parts[0]] > 0):
            return np.inf, grad
        start, red, a, _, x = parts
        mu_star = float(mu[start])
        d = np.concatenate([np.full(b.stop - b.start, mu[start + 1 + k]) for k, b in enumerate(red.blocks)]) if red.blocks else np.zeros(0)
        t = red.gram
        xt = x @ t
        y = (np.eye(t.shape[0]) - xt) / a
        ty = t @ y
        value = mu_star * (red.groups - np.trace(xt)) / a + float(np.sum(np.diag(ty) * d))
        ytty = y.T @ ty
        trace_h2 = (red.groups - 2 * np.trace(xt) + np.trace(xt @ xt)) / a**2
        grad[start] = -(mu_star * trace_h2 + float(np.sum(np.diag(ytty) * d)))
        z = mu_star * np.diag(ytty) + np.einsum("ij,j,ji->i", ty, d, ty)
        for k, block in enumerate(red.blocks):
            grad[start + 1 + k] = -z[block].sum()
        return value, grad

    def cell_variances(self, beta: np.ndarray, level: int) -> np.ndarray:
        """diag(G_ℓᵀ H⁺ G_ℓ): the variance factor of each group of a query at `level`."""
        parts = self._parts(beta)
        size = self.attribute.level_size(level)
        if parts is None or level < parts[0]:
            return np.full(size, np.inf)
        start, red, a, _, x = parts
        if level == start:
            u = red.indicator
            return (1 - np.einsum("ij,jk,ik->i", u, x, u)) / a
        ty = (red.gram - red.gram @ x @ red.gram) / a
        return np.diag(ty)[red.blocks[level - start - 1]].copy()

    def solve(self, beta: np.ndarray, rhs: np.ndarray, level: int) -> np.ndarray:
        """E_ℓᵀ H'⁻¹ v for each row v of `rhs` (given on the ℓ*-groups): the LS estimate at ℓ.

        `rhs` has shape (..., n*); the result (..., groups at `level`).
        """
        parts = self._parts(beta)
        if parts is None or level < parts[0]:
            raise InternalError("a least-squares solve at a level that is not estimable")
        start, red, a, _, x = parts
        u = red.indicator
        solved = (rhs - (rhs @ u) @ x @ u.T) / a
        if level == start:
            return solved
        return solved @ u[:, red.blocks[level - start - 1]]

    def start_level(self, beta: np.ndarray) -> int | None:
        positive = np.flatnonzero(beta > 0)
        return int(positive[0]) if positive.size else None
