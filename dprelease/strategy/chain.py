"""The information matrix of one hierarchy attribute, inverted exactly on its tree.

Within one residual subset S of the plain attributes, least squares sees a hierarchy attribute
(county → state → summed out) as a tree: each node u at level ℓ carries a measurement of its
total T_u with precision β_ℓ (the sum of N_Ā p_A over the measurements at that level), i.e.
the information matrix is H = Σ_ℓ β_ℓ K_ℓ, K_ℓ = G_ℓ G_ℓᵀ, K_0 = I, K_L = 11ᵀ. The variance of
the least-squares estimate of every node total, V_u = 1_uᵀ H⁺ 1_u, follows exactly from two
passes over the tree (inverse-variance weighting of independent estimates):

    upward:   s_u = 1 / (1/Σ_{c child of u} s_c + β_ℓ)          (s = 1/β_0 at the leaves)
    downward: R_root = 0;  for a child c of v:
              R_c = 1 / (1/(β_v + R_v) + Σ_{siblings c'} s_c'),   V_c = 1 / (1/s_c + R_c),

where s_u uses only the measurements inside u's subtree and R_c is the precision of what the
rest says about T_c. Unequal group sizes need nothing special, all terms are positive (no
cancellation), and an unmeasured finest level gives s = ∞ and V = ∞: not estimable.
tr(H⁺ K_ℓ) = Σ_{u at level ℓ} V_u. Gradients in β are central differences (one-sided at 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dprelease.strategy.domain import Attribute

_STEP = 1e-5  # relative finite-difference step


def _parents(attribute: Attribute) -> list[np.ndarray]:
    """For each level ℓ < L, the parent (level ℓ+1 group) of every level-ℓ group."""
    out = []
    for level in range(attribute.total_level):
        codes = np.asarray(attribute.groups[level])
        count = int(codes.max()) + 1
        member = np.zeros(count, dtype=np.int64)
        member[codes] = np.arange(codes.size)  # one finest member of each group
        if level + 1 == attribute.total_level:
            out.append(np.zeros(count, dtype=np.int64))
        else:
            out.append(np.asarray(attribute.groups[level + 1])[member])
    return out


@dataclass(frozen=True, eq=False)
class ChainSolver:
    """Exact traces, per-node variances and their gradients for one hierarchy attribute."""

    attribute: Attribute
    _widths: list[int] = field(init=False, repr=False)  # groups at level ℓ + 1
    _parent: list[np.ndarray] = field(init=False, repr=False)
    _counts: np.ndarray = field(init=False, repr=False)  # leaves per level-1 group

    def __post_init__(self) -> None:
        parents = _parents(self.attribute)
        widths = [self.attribute.level_size(level + 1) for level in range(len(parents))]
        object.__setattr__(self, "_widths", widths)
        object.__setattr__(self, "_parent", parents)
        counts = np.bincount(parents[0], minlength=self.attribute.level_size(1))
        object.__setattr__(self, "_counts", counts.astype(np.float64))

    @property
    def levels(self) -> int:
        return self.attribute.total_level + 1

    def node_variances(self, beta: np.ndarray) -> list[np.ndarray]:
        """V_u for every node, per level: arrays of shape (batch, groups at ℓ).

        `beta` has shape (batch, levels) and non-negative entries. The leaves of one parent
        are alike (each is measured with β_0), so level 0 is computed per parent group.
        """
        beta = np.atleast_2d(beta)
        top = self.attribute.total_level
        counts = self._counts
        with np.errstate(divide="ignore", invalid="ignore"):
            leaf = 1 / beta[:, :1]  # s of every leaf
            s = [leaf * np.ones((1, counts.size))]  # level 0 kept per level-1 group
            finite_sum = [np.where(np.isfinite(leaf), leaf * counts, 0.0)]
            infinite = [np.where(np.isfinite(leaf), 0.0, 1.0) * counts]
            total = np.where(infinite[0] > 0, np.inf, finite_sum[0])
            s.append(1 / (1 / total + beta[:, 1:2]))
            for level in range(2, top + 1):
                child = s[-1]
                fin = np.where(np.isfinite(child), child, 0.0)
                inf = (~np.isfinite(child)).astype(np.float64)
                fin_sum = self._sum_children(level - 1, fin)
                inf_count = self._sum_children(level - 1, inf)
                total = np.where(inf_count > 0, np.inf, fin_sum)
                s.append(1 / (1 / total + beta[:, level : level + 1]))
                finite_sum.append(fin_sum)
                infinite.append(inf_count)
            variances: list[np.ndarray] = [np.empty(0)] * (top + 1)
            variances[top] = s[top]
            outside = np.zeros_like(s[top])  # R at the current level
            # A precision of 0 (or one so small its inverse overflows) is a level that cannot
            # be estimated: its variance is meant to come out as inf.
            with np.errstate(divide="ignore", over="ignore"):
                for level in range(top, 0, -1):
                    parent = self._parent[level - 1] if level > 1 else np.arange(counts.size)
                    child = s[level - 1]
                    child_inf = ~np.isfinite(child)
                    others_inf = infinite[level - 1][:, parent] - child_inf > 0
                    others = np.where(
                        others_inf,
                        np.inf,
                        finite_sum[level - 1][:, parent] - np.where(child_inf, 0.0, child),
                    )
                    above = 1 / (beta[:, level : level + 1] + outside)[:, parent]
                    child_outside = 1 / (above + np.maximum(others, 0.0))
                    variances[level - 1] = 1 / (1 / child + child_outside)
                    outside = child_outside
        return variances

    def _sum_children(self, level: int, values: np.ndarray) -> np.ndarray:
        """Each row's level-ℓ values summed into their level-ℓ+1 parents: (batch, width).

        One bincount (no scipy: its import cost a release 0.3 s of CPU); each sum is added
        in child order from 0, as the sparse product that it replaces did (the same bits)."""
        rows, width = values.shape[0], self._widths[level]
        bins = (np.arange(rows)[:, None] * width + self._parent[level][None, :]).ravel()
        sums = np.bincount(bins, weights=values.ravel(), minlength=rows * width)
        return sums.reshape(rows, width)

    def traces(self, beta: np.ndarray) -> np.ndarray:
        """tr(H⁺ K_ℓ) for every level ℓ: shape (batch, levels); inf where not estimable."""
        variances = self.node_variances(beta)
        with np.errstate(invalid="ignore"):
            leaves = (variances[0] * self._counts).sum(axis=1)
        return np.stack([leaves, *(v.sum(axis=1) for v in variances[1:])], axis=1)

    def values_and_grads(self, beta: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """f_k = Σ_ℓ μ_kℓ tr(H_k⁺ K_ℓ) for each row k, and ∂f_k/∂β_kℓ (finite differences)."""
        rows, levels = beta.shape
        scale = np.maximum(beta.max(axis=1, keepdims=True), 1e-300)
        step = np.where(beta > 0, _STEP * beta, _STEP * scale)
        down = np.where(beta > 0, beta - step, beta)
        batch = [beta]
        for level in range(levels):
            up_beta, down_beta = beta.copy(), beta.copy()
            up_beta[:, level] += step[:, level]
            down_beta[:, level] = down[:, level]
            batch += [up_beta, down_beta]
        traces = self.traces(np.concatenate(batch)).reshape(len(batch), rows, levels)
        with np.errstate(invalid="ignore"):
            values = np.where(mu > 0, mu * traces, 0.0).sum(axis=2)
        grads = np.zeros((rows, levels))
        with np.errstate(invalid="ignore", divide="ignore"):  # inf − inf: not estimable, → 0
            for level in range(levels):
                width = step[:, level] + (beta[:, level] - down[:, level])
                grads[:, level] = (values[1 + 2 * level] - values[2 + 2 * level]) / width
        return values[0], np.where(np.isfinite(grads), grads, 0.0)

    def cell_variances(self, beta: np.ndarray, level: int) -> np.ndarray:
        """diag(G_ℓᵀ H⁺ G_ℓ): the variance of each group total at `level`."""
        variances: np.ndarray = self.node_variances(beta[None, :])[level][0]
        return variances[self._parent[0]] if level == 0 else variances
