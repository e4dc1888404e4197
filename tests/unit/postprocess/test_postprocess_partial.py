"""A discovered domain leaves rare values out (no `other`): a table over it sums to less than
the grand total, so consistency must not force it to (issue 24). Tiny plans, exact answers."""

import dataclasses

import numpy as np

from dprelease.plan.parse import parse_plan
from dprelease.plan.schema import CategoricalColumn
from dprelease.plan.subtables import Workload, determines, shared_key
from dprelease.postprocess.pipeline import postprocess
from dprelease.stats.allocation import allocate
from dprelease.strategy.domain import build_domain, downward_closure
from dprelease.strategy.merge import _unions
from dprelease.strategy.residual import ErrorModel
from helpers.postprocess import ONLY_CONSISTENT

TABLES = [
    {"name": "total", "by": []},
    {"name": "sex", "by": ["sex"]},
    {"name": "language", "by": ["lang"]},
    {"name": "language_by_sex", "by": ["lang", "sex"]},
]


def discovered_plan(tables=TABLES, strategy="workload"):
    """sex declared; lang discovered, its domain found at release: ("en", "es")."""
    raw = {
        "version": 1,
        "columns": {
            "sex": {"kind": "categorical", "domain": ["F", "M"]},
            "lang": {"kind": "categorical", "domain": {"discover": {"min_count": 5}}},
        },
        "tables": tables,
        "budget": {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-10, "strategy": strategy},
    }
    plan = parse_plan(raw)
    found = CategoricalColumn("lang", ("en", "es"), domain_source="discovered")
    columns = tuple(found if c.name == "lang" else c for c in plan.schema.columns)
    schema = dataclasses.replace(plan.schema, columns=columns)
    return dataclasses.replace(plan, schema=schema)


def test_a_discovered_column_is_never_summed_out():
    schema = discovered_plan().schema
    assert determines(schema, ("lang", "sex"), ("lang",))
    assert not determines(schema, ("lang", "sex"), ("sex",))
    assert not determines(schema, ("lang",), ())
    assert shared_key(schema, ("lang",), ("sex",)) is None
    assert shared_key(schema, ("lang",), ("lang", "sex")) == ("lang",)
    workload = Workload(schema, tuple(tuple(t["by"]) for t in TABLES))
    # the language tables agree with each other, never with the total or the sex table
    links = {(table, key) for table, key, _ in workload.links()}
    assert (3, ("lang",)) in links and (3, ("sex",)) not in links
    assert not any(table in (2, 3) and key == () for table, key in links)


def test_consistency_keeps_the_total_over_a_discovered_table():
    """Exact counts: 100 rows, 20 of them with a rare language outside the found domain."""
    plan = discovered_plan()
    noisy = {
        "total": np.array([100.0]),
        "sex": np.array([50.0, 50.0]),
        "language": np.array([60.0, 20.0]),
        "language_by_sex": np.array([30.0, 30.0, 10.0, 10.0]),
    }
    out = postprocess(plan, allocate(plan), noisy, ONLY_CONSISTENT).released_counts
    for name, counts in noisy.items():  # consistent already: nothing moves
        np.testing.assert_allclose(out[name], counts, atol=1e-9)


def test_the_strategy_derives_no_table_from_a_discovered_marginal():
    plan = discovered_plan([{"name": "language_by_sex", "by": ["lang", "sex"]}])
    domain = build_domain(plan.schema, [("lang", "sex")])
    described = {
        domain.describe(m) for m in downward_closure(domain, [domain.marginal_of(("lang", "sex"))])
    }
    assert described == {("sex", "lang"), ("lang",)} or described == {("lang", "sex"), ("lang",)}
    sex, lang = domain.marginal_of(("sex",)), domain.marginal_of(("lang",))
    # a union of a language marginal and a sex one would not give the sex table's sums
    assert _unions(domain, [sex, lang], np.ones(2), cap=100) == {}


def test_the_error_model_gives_the_total_no_help_from_a_discovered_marginal():
    """Least squares never links the language table to the total (above), so the strategy's
    exact error must not either: the total's variance is its own measurement's, 1/p."""
    plan = discovered_plan([{"name": "total", "by": []}, {"name": "language", "by": ["lang"]}])
    domain = build_domain(plan.schema, [(), ("lang",)])
    total, lang = domain.marginal_of(()), domain.marginal_of(("lang",))
    model = ErrorModel(domain, (total, lang), (total, lang))
    np.testing.assert_allclose(model.table_variances(np.array([1.0, 2.0])), [1.0, 2 * 0.5])
    assert np.isinf(model.table_variances(np.array([0.0, 1.0]))[0])  # not estimable from lang
