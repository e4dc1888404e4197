"""A statistic's public texts: its short label and the rule of which rows it uses.

Both are public (a release states them); neither ever names a count of rows. The specs
themselves and their parsing are `dprelease.plan.stat_spec`'s.
"""

from __future__ import annotations

from fractions import Fraction

from dprelease.plan.model_spec import PcaSpec, RegressionSpec, model_label, model_rule
from dprelease.plan.stat_spec import AutoSpec, RobustSpec, StatSpec, stat_bounds, stat_resolution
from dprelease.plan.summary_spec import MeanSpec, QuantileSpec, bounds_out
from dprelease.plan.values_text import public_number


def _names(spec: StatSpec) -> str:
    if isinstance(spec, AutoSpec):
        return _names(spec.candidates[0])
    if not isinstance(spec, QuantileSpec | RobustSpec) or spec.kind == "mean":
        return spec.kind
    return ", ".join(
        "median" if q == Fraction(1, 2) else f"{float(q):g}-quantile" for q in spec.quantiles
    )


def value_heads(spec: StatSpec) -> list[str]:
    """The headings of the values a statistic releases per cell: 'q = 0.25', … for quantiles,
    else its kind ('sum', 'mean')."""
    if isinstance(spec, AutoSpec):
        return value_heads(spec.candidates[0])
    if isinstance(spec, QuantileSpec | RobustSpec) and spec.kind == "quantile":
        return [f"q = {float(q):g}" for q in spec.quantiles]
    return [spec.kind]


def stat_label(spec: StatSpec) -> str:
    """A short public description, e.g. 'median of age in [0, 100]'."""
    if isinstance(spec, RegressionSpec | PcaSpec):
        return model_label(spec)
    lo, hi = bounds_out(*stat_bounds(spec))
    if isinstance(spec, AutoSpec):
        return f"{_names(spec)} of {spec.column} in [{lo}, {hi}] by the method of least error"
    if isinstance(spec, RobustSpec):
        how = spec.method.replace("_", "-")
        where = f" in [{lo}, {hi}]" if spec.bounded else ""
        return f"{_names(spec)} of {spec.column}{where} by {how}"
    if isinstance(spec, QuantileSpec):
        return f"{_names(spec)} of {spec.column} in [{lo}, {hi}]"
    return f"{spec.kind} of {spec.column} clamped to [{lo}, {hi}]"


def stat_rule(spec: StatSpec) -> str:
    """Which rows the statistic uses and what it does to their values (public: the rule, never
    how many rows it leaves out), e.g. 'median of PINCP over the rows where PINCP is a number
    …'."""
    if isinstance(spec, RegressionSpec | PcaSpec):
        return model_rule(spec)
    if isinstance(spec, AutoSpec):  # a release states the chosen method's rule
        methods = " or ".join(c.method.replace("_", " ") for c in spec.candidates)
        return f"{stat_rule(spec.candidates[0])}; by {methods}, whichever has the least error"
    lo, hi = bounds_out(*stat_bounds(spec))
    step = stat_resolution(spec)
    used = (
        f"{_names(spec)} of {spec.column} over the rows where {spec.column} is a number (a "
        "missing or non-numeric value leaves its row out of this statistic)"
    )
    if isinstance(spec, RobustSpec):
        rounded = f"a multiple of {public_number(step)}" if step else "6 significant digits"
        outside = (
            f"a value below {lo} or above {hi} counts as that bound"
            if spec.bounded
            else "no value is clamped"
        )
        if spec.kind == "mean":
            return (
                f"{used}; {outside} (a wide public range, not a clamp on typical values); the "
                f"rows are split into {spec.groups} disjoint random groups and the released "
                "value is a private median of the groups' means, one of the candidates "
                f"{public_number(lo)}, {public_number(lo + step)}, … up to {public_number(hi)}"
            )
        return f"{used}; {outside}; the released value is rounded to {rounded}"
    if isinstance(spec, QuantileSpec):
        last = spec.lo + step * (spec.candidate_count - 1)
        return (
            f"{used}; a value below {lo} or above {hi} counts as below or above every "
            "candidate, however far out it lies; the released value is one of the candidates "
            f"{', '.join(public_number(lo + k * step) for k in range(3))}, … up to "
            f"{public_number(last)} "
            f"(resolution {public_number(step)})"
        )
    rounded = f"clamped into [{lo}, {hi}] and rounded to a multiple of {public_number(step)}"
    if isinstance(spec, MeanSpec):
        return f"{used}; values {rounded}; the mean's count is of the same rows"
    return f"{used}; values {rounded}"
