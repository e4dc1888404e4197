"""The exact error of tables measured as listed and made consistent (`strategy: workload`).

Consistency over the listed tables is the least-squares estimate from them, so the error
model of the strategy gives each table's exact per-cell RMSE after that step, with the
candidates being the listed marginals and each one's precision the sum of 1/variance of the
tables that measure it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dprelease.errors import PlanError
from dprelease.plan.schema import Schema
from dprelease.strategy.cost import fits, model_size
from dprelease.strategy.domain import build_domain
from dprelease.strategy.residual import ErrorModel


def consistent_rmse(
    schema: Schema, tables: Sequence[tuple[str, tuple[str, ...], float]]
) -> dict[str, float] | None:
    """Per table (name, by, noise variance): the RMSE after consistency; None where the error
    model does not apply (two hierarchies, a branching one) or is beyond the bound (`cost`)."""
    try:
        domain = build_domain(schema, [by for _, by, _ in tables])
        workload = tuple(domain.marginal_of(by) for _, by, _ in tables)
        candidates = tuple(dict.fromkeys(workload))
        if not fits(model_size(domain, workload, auto=False)):
            return None
        model = ErrorModel(domain, workload, candidates)
    except PlanError:
        return None
    precisions = np.zeros(len(candidates))
    for marginal, (_, _, variance) in zip(workload, tables, strict=True):
        precisions[candidates.index(marginal)] += 1 / variance
    totals = model.table_variances(precisions)
    return {
        name: math.sqrt(float(total) / domain.marginal_cells(marginal))
        for (name, _, _), marginal, total in zip(tables, workload, totals, strict=True)
    }
