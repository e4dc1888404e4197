"""What the strategy's search costs, estimated from the domain and the tables alone (issue 25).

The exact error model (`residual.ErrorModel`) is a dense matrix of one row per residual subset
S of the plain attributes inside some table (times the hierarchy's levels) and one column per
candidate marginal; every evaluation of the workload error multiplies by it, and a hierarchy
adds a pass over its tree per row. One table over k two-valued columns has 2^k subsets and,
under `strategy: auto`, 2^k candidates (every coarsening): k = 14 asked for 2 GB and 87 s.
Both counts follow from the tables' columns by arithmetic (upper bounds; counted exactly by a
cheap enumeration where they are small), so before a model is built:

- `model_size` says how big it would be, and `fits` whether it stays within
  `limits.STRATEGY_MAX_SUBSETS`, `STRATEGY_MAX_ENTRIES` and affords 50 evaluations within
  `STRATEGY_WORK`; under `auto`, `select` then takes the tables' own marginals as candidates
  or, when even that does not fit, raises `StrategyTooLarge` and the tables are measured as
  listed without the model (`allocate` says so in its advice).
- `Effort` counts the estimated work of the evaluations one shape search makes and stops the
  search at `limits.STRATEGY_WORK` (deterministic: counted, never timed). A search stopped
  early returns the best shape it has, which is a valid strategy (any shape spends exactly the
  budget); only its accuracy may be short of the optimum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dprelease.admission import DataSize, Estimate, register
from dprelease.errors import PlanError
from dprelease.limits import STRATEGY_MAX_ENTRIES, STRATEGY_MAX_SUBSETS, STRATEGY_WORK
from dprelease.strategy.domain import Domain, Marginal, build_domain, downward_closure

# Estimated nanoseconds on this kind of machine (2 cores, numpy): what one evaluation costs
_CALL_NS = 60_000  # the Python and numpy overhead of one objective evaluation
_ENTRY_NS = 16  # two products with the dense design matrix (one transposed)
_NODE_NS = 130  # per hierarchy node, per row of the finite-difference batch
_LEVEL_NS = 30_000  # numpy calls per hierarchy level in one tree pass


class StrategyTooLarge(PlanError):
    """The strategy's error model would exceed the bound: the tables are measured as listed."""


@dataclass(frozen=True)
class ModelSize:
    """An error model's size (or an upper bound on it), and the estimated cost of using it."""

    subsets: int  # residual subsets of the plain attributes
    levels: int  # rows per subset: the hierarchy's levels (1 without one)
    candidates: int
    nodes: int  # hierarchy tree nodes one pass visits (0 without a hierarchy)

    @property
    def rows(self) -> int:
        return self.subsets * self.levels

    @property
    def entries(self) -> int:
        """Entries of the design matrix (rows × candidates)."""
        return self.rows * self.candidates

    @property
    def evaluation_ns(self) -> int:
        """Estimated cost of one evaluation of the workload error and its gradient."""
        cost = _CALL_NS + _ENTRY_NS * self.entries
        if self.nodes:
            batch = 1 + 2 * self.levels  # the value and a central difference per level
            cost += self.subsets * batch * self.nodes * _NODE_NS + self.levels * _LEVEL_NS
        return cost


_ENUMERATED = 1 << 14  # counts up to this are made exact by enumeration (milliseconds)


def _subsets(domain: Domain, distinct: Sequence[Marginal]) -> int:
    """The residual subsets of the model's rows: every subset of the plain attributes a table
    keeps (an attribute of one value has no residual). Σ 2^|members| bounds it; where that is
    small the union is counted exactly (tables share most of their subsets)."""
    masks = []
    for marginal in distinct:
        mask = 0
        for i, (a, level) in enumerate(zip(domain.attributes, marginal, strict=True)):
            if a.is_plain and level == 0 and a.size > 1:
                mask |= 1 << i
        masks.append(mask)
    bound: int = sum(1 << mask.bit_count() for mask in set(masks))
    if bound > _ENUMERATED:
        return bound
    seen: set[int] = set()
    for mask in set(masks):
        sub = mask
        while True:  # every submask of `mask`
            seen.add(sub)
            if sub == 0:
                break
            sub = (sub - 1) & mask
    return len(seen)


def _candidates(domain: Domain, distinct: Sequence[Marginal]) -> int:
    """The downward closure's size: Σ of each table's coarsenings bounds it; where that is
    small it is counted exactly."""
    bound = sum(
        math.prod(a.total_level - level + 1 for a, level in zip(domain.attributes, m, strict=True))
        for m in distinct
    )
    if bound > _ENUMERATED // 8:  # the closure's own search costs ~100 µs a marginal
        return bound
    return len(downward_closure(domain, distinct))


def model_size(domain: Domain, workload: Sequence[Marginal], auto: bool) -> ModelSize:
    """The size of the model over `workload` with the downward closure as candidates (`auto`)
    or the workload's own marginals: exact where cheap to count, else an upper bound, always
    without building anything."""
    distinct = tuple(dict.fromkeys(workload))
    chains = [a for a in domain.attributes if not a.is_plain]
    levels = 1
    nodes = 0
    if len(chains) == 1:  # two hierarchies: the model refuses them before building anything
        chain = chains[0]
        levels = chain.total_level + 1
        nodes = chain.level_size(1) + sum(
            chain.level_size(level) for level in range(1, chain.total_level + 1)
        )
    return ModelSize(
        subsets=_subsets(domain, distinct),
        levels=levels,
        candidates=_candidates(domain, distinct) if auto else len(distinct),
        nodes=nodes,
    )


_EVALUATIONS = 50  # a search that cannot afford this many evaluations is not worth starting


def excess(size: ModelSize) -> str | None:
    """What about a model of this size is beyond the bound (None: it fits)."""
    if size.subsets > STRATEGY_MAX_SUBSETS:
        return f"{size.subsets:,} residual subsets (limit {STRATEGY_MAX_SUBSETS:,})"
    if size.entries > STRATEGY_MAX_ENTRIES:
        return f"{size.rows:,} × {size.candidates:,} entries (limit {STRATEGY_MAX_ENTRIES:,})"
    if size.evaluation_ns * _EVALUATIONS > STRATEGY_WORK:
        return f"about {size.evaluation_ns / 1e6:.3g} ms per evaluation of its error"
    return None


def fits(size: ModelSize) -> bool:
    """Whether a model of this size may be built and searched within the bound."""
    return excess(size) is None


def too_large(size: ModelSize) -> StrategyTooLarge:
    """The one-line reason a model is not built (the allocation's advice quotes it)."""
    return StrategyTooLarge(f"its exact error model would need {excess(size)}")


class Effort:
    """The work one shape search may still do, in estimated nanoseconds."""

    def __init__(self, limit: int = STRATEGY_WORK) -> None:
        self.left = limit

    def spend(self, size: ModelSize) -> bool:
        """Charge one evaluation; False once the search has used up its work."""
        self.left -= size.evaluation_ns
        return self.left >= 0

    @property
    def exhausted(self) -> bool:
        return self.left < 0


def strategy_estimate(plan: Any, data: DataSize) -> Estimate:
    """Admission's estimate of `strategy: auto`'s search (issue 35): the model it would build
    (the closure's, the tables' own marginals, or none: the tables as listed), and one
    search's work, capped at STRATEGY_WORK; the same `fits` decides at allocation time."""
    bys = [spec.by for spec in plan.tables]
    if plan.budget.strategy != "auto" or not bys:
        return Estimate("strategy", 0, 0, "STRATEGY_WORK", "tables as listed")
    try:
        domain = build_domain(plan.schema, bys)
        workload = tuple(domain.marginal_of(by) for by in bys)
    except PlanError:
        return Estimate("strategy", 0, 0, "STRATEGY_WORK", "tables as listed")
    for auto, path in ((True, "closure's marginals"), (False, "tables' marginals")):
        size = model_size(domain, workload, auto=auto)
        if fits(size):
            work = min(size.evaluation_ns * _EVALUATIONS, STRATEGY_WORK)
            return Estimate("strategy", work, size.entries * 8 * 4, "STRATEGY_WORK", path)
    return Estimate("strategy", 0, 0, "STRATEGY_MAX_ENTRIES", "tables as listed")


register("strategy", strategy_estimate)
