"""End-to-end privacy audit over neighbouring *data sets* (issue 11): data → encode → unit cap →
counts → the release's secure sampler, against what the allocator claims.

`tests/statistical/test_audit.py` audits each sampler at the sensitivity the allocator
*declares*; a wrong declaration (the `replace` sensitivity halved) or a unit cap that keeps one
row too many passes it. Here the neighbouring inputs are data sets one row or one unit apart, so
the counts move as far as the data really moves them, and those mutations are violations
(checked by hand: each mutation fails this file, see README "Tests and trust").
"""

import numpy as np
import pyarrow as pa
import pytest

from dprelease.accounting.allocation import allocate
from dprelease.data.count import count, encode
from dprelease.plan.parse import parse_plan
from helpers.audit import audit_data

SAMPLES = 20_000


def _plan(budget, neighbors, unit=None):
    raw = {
        "columns": {"sex": {"kind": "categorical", "domain": ["F", "M"]}},
        "tables": [{"name": "sex", "by": ["sex"]}],
        "budget": budget,
        "neighbors": neighbors,
    }
    if unit is not None:
        raw["unit"] = unit
        raw["columns"]["household"] = {"kind": "categorical", "domain": ["x"], "other": "x"}
    return parse_plan(raw)


def _counts(plan, rows):
    """The true counts of the table, made by the real pipeline from the rows (sex, household)."""
    table = pa.table({"sex": [r[0] for r in rows], "household": [r[1] for r in rows]})
    return count(encode(table, plan), plan).counts["sex"]


def _base():
    # 30 households: 10 of one F, 10 of two M, 10 of one F and one M.
    rows = [("F", f"a{i}") for i in range(10)]
    rows += [("M", f"b{i}") for i in range(10) for _ in range(2)]
    rows += [(sex, f"c{i}") for i in range(10) for sex in ("F", "M")]
    return rows


PURE = {"accounting": "pure", "epsilon": 1.0}
ZCDP = {"accounting": "zcdp", "rho": 0.5, "delta": 1e-10}
HOUSEHOLD = {"kind": "id", "column": "household", "max_rows": 3}
PAIR = {"kind": "id", "column": "household", "max_rows": 2}


def _add_row(rows):
    return [*rows, ("F", "new")]


def _replace_row(rows):
    return [("M", rows[0][1]), *rows[1:]]  # one person's answer changed: F → M


def _add_big_household(rows):
    return [*rows, *[("F", "big")] * 4]  # 4 rows; the cap keeps 3


def _replace_household(rows):
    # household b0 (two M rows) replaced by a household of two F rows
    return [r for r in rows if r[1] != "b0"] + [("F", "b0"), ("F", "b0")]


CASES = [
    ("add-remove-row", PURE, "add_remove", None, _add_row),
    ("replace-row", PURE, "replace", None, _replace_row),
    ("add-remove-household", PURE, "add_remove", HOUSEHOLD, _add_big_household),
    ("replace-household", PURE, "replace", PAIR, _replace_household),
    ("zcdp-replace-row", ZCDP, "replace", None, _replace_row),
]


@pytest.mark.parametrize(
    ("budget", "neighbors", "unit", "neighbour"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_neighbouring_data_sets_keep_the_claimed_privacy(budget, neighbors, unit, neighbour):
    plan = _plan(budget, neighbors, unit)
    table = allocate(plan).measurements[0]  # what the release draws noise for
    rows = _base()
    x, x_prime = _counts(plan, rows), _counts(plan, neighbour(rows))
    assert np.any(x != x_prime)
    result = audit_data(table, x, x_prime, SAMPLES)
    assert not result.violated, result
    # Power: the same pair through a table with 0.75 × the noise is caught.
    if table.noise.mechanism == "discrete_laplace":
        from dataclasses import replace

        from dprelease.accounting.mechanisms import Noise

        under = replace(table, noise=Noise(table.noise.mechanism, table.noise.scale * 0.75))
        assert audit_data(under, x, x_prime, SAMPLES).violated
