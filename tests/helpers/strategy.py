"""Small schemas and the dense least-squares oracle the strategy tests share."""

from __future__ import annotations

import numpy as np

from dprelease.plan.schema import CategoricalColumn, Schema
from dprelease.strategy.domain import Domain, Marginal

PARENTS = {"c1": "s1", "c2": "s2", "c3": "s2", "c4": "s3", "c5": "s3", "c6": "s3"}


def small_schema() -> Schema:
    """county → state with unequal groups (1, 2, 3 counties), and two plain columns."""
    return Schema(
        (
            CategoricalColumn("state", ("s1", "s2", "s3")),
            CategoricalColumn("county", tuple(PARENTS), parent="state", parent_map=PARENTS),
            CategoricalColumn("sex", ("F", "M")),
            CategoricalColumn("age", ("a", "b", "c", "d")),
        )
    )


SELECT_PARENTS = {**PARENTS, "c7": "s3"}
SELECT_SCHEMA = Schema(
    (
        CategoricalColumn("state", ("s1", "s2", "s3")),
        CategoricalColumn(
            "county", tuple(SELECT_PARENTS), parent="state", parent_map=SELECT_PARENTS
        ),
        CategoricalColumn("sex", ("F", "M")),
        CategoricalColumn("age", ("a", "b", "c", "d", "e")),
        CategoricalColumn("race", ("w", "b", "o")),
    )
)
"""Five columns, a county → state hierarchy with a three-county state (the selection tests)."""
SELECT_COLUMNS = ("state", "county", "sex", "age", "race")


def query_matrix(domain: Domain, marginal: Marginal) -> np.ndarray:
    """The dense 0/1 matrix of a marginal over the full product domain (the oracle)."""
    out = np.ones((1, 1))
    for attribute, level in zip(domain.attributes, marginal, strict=True):
        if level == attribute.total_level:
            block = np.ones((1, attribute.size))
        else:
            groups = np.asarray(attribute.groups[level])
            block = np.zeros((groups.max() + 1, attribute.size))
            block[groups, np.arange(attribute.size)] = 1
        out = np.kron(out, block)
    return out


def dense_variances(domain, candidates, precisions, workload):  # type: ignore[no-untyped-def]
    """Each workload marginal's total variance and cell variances under dense least squares
    (np.inf / None where the measurements do not determine it)."""
    info = sum(
        p * query_matrix(domain, c).T @ query_matrix(domain, c)
        for p, c in zip(precisions, candidates, strict=True)
    )
    pinv = np.linalg.pinv(info, rcond=1e-10)
    totals, cells = [], []
    for b in workload:
        q = query_matrix(domain, b)
        if np.abs(q @ pinv @ info - q).max() > 1e-6:  # not in the row space: not estimable
            totals.append(np.inf)
            cells.append(None)
            continue
        cov = q @ pinv @ q.T
        totals.append(np.trace(cov))
        cells.append(np.diag(cov))
    return np.array(totals), cells
