"""The statistic kinds a table's `stat:` may name and each kind's methods, listed once.

The plan's parser, the dashboard's forms and `dprelease.stats.registry` ask this module; no
other module spells a kind's or a method's name in a list of its own (guarded by
tests/unit/ui/test_lists_once.py).
"""

from __future__ import annotations

from dprelease.errors import PlanError, quote
from dprelease.plan.model_spec import MODEL_METHODS

AUTO = "auto"
"""A quantile's or mean's `method: auto` (issue 38.3): the one of its other methods with the least
expected error, chosen at allocation from public facts (`dprelease.stats.auto_method`)."""

METHODS: dict[str, tuple[str, ...]] = {
    "quantile": ("exponential", "smooth_sensitivity", AUTO),
    "sum": ("clamped",),
    "mean": ("clamped", "sample_and_aggregate", AUTO),
    **MODEL_METHODS,  # regression (linear, logistic) and pca: `model_spec` (issue 28.4)
}
"""Each kind's methods, its default first (left out of a written plan; a plan without `method`
keeps meaning it), `auto` last where the kind has one; `dprelease.stats.registry` has one object
per pair."""

STAT_KINDS = tuple(METHODS)
"""Every kind a table's `stat:` may name, in the order messages list them."""
SUMMARY_KINDS = tuple(kind for kind in METHODS if kind not in MODEL_METHODS)
"""The kinds that summarise one column per cell (a model has its own form: `model_edit`)."""


def other_methods(kinds: tuple[str, ...] = SUMMARY_KINDS) -> tuple[str, ...]:
    """The methods of `kinds` other than each kind's default, in order, each once."""
    return tuple(dict.fromkeys(m for kind in kinds for m in METHODS[kind][1:]))


UNBOUNDED = {kind: METHODS[kind][1] for kind in SUMMARY_KINDS if len(METHODS[kind]) > 1}
"""The summary kinds with a method that needs no clamping bounds, and that method."""


def candidate_methods(kind: str) -> tuple[str, ...]:
    """The methods `auto` chooses among for `kind`: all but `auto`, the default first."""
    return tuple(method for method in METHODS[kind] if method != AUTO)


def check_method(kind: str, method: object, what: str = "") -> None:
    if method not in METHODS[kind]:
        where = f"{what}.method" if what else f"A {kind}'s method"
        raise PlanError(
            f"{where} must be one of {', '.join(METHODS[kind])} for a {kind}, got {quote(method)}."
        )
