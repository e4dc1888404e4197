"""Survey-weighted tables in the allocation (issue 37.8): priced as count tables, then scaled.

A weighted table's sensitivity is W times a count table's (`TableSpec.sensitivity_factor`).
Noise of scale W·b on sensitivity W·Δ costs exactly what scale b costs on Δ under every
mechanism (ε = Δ₁/b for (discrete) Laplace, ρ = Δ₂²/2σ², the analytic Gaussian's δ(ε) depends
on Δ₂/σ only), so the allocation prices a weighted table as the count table it would be
(`as_counts`: its target divided by W, its weight as written, so that under `optimal` its
share is the one a count table of its cells gets: its variance counted in units of W²) and
then multiplies its sensitivity and noise scale by W (`weighted_back`; the scale rounded up,
so the cost never grows; measured as listed, its expected RMSE is its noise's std). Every
other part of the allocation keeps its one count sensitivity.

The strategy (`strategy: auto`) combines count marginals that share one sensitivity; a plan
with weighted tables is measured as listed (each table its own measurement), and the advice
says so.
"""

from __future__ import annotations

import dataclasses
import math

from dprelease.accounting.allocated import Allocation, TableBudget, priced
from dprelease.accounting.mechanisms import Noise
from dprelease.plan.model import Plan
from dprelease.plan.table_spec import Target, scaled

LISTED_NOTE = (
    "Survey-weighted tables ({names}) make every table a measurement of its own (strategy: "
    "workload): weighted totals and counts have different sensitivities, and the strategy "
    "combines counts only."
)


def weighted_names(plan: Plan) -> list[str]:
    return [spec.name for spec in plan.tables if spec.survey_weight is not None]


def as_counts(plan: Plan) -> Plan:
    """The plan with each weighted table as the count table it is priced as (the plan
    itself when it has none)."""
    if not weighted_names(plan):
        return plan
    tables = []
    for spec in plan.tables:
        factor = spec.sensitivity_factor
        target = spec.target
        if target is not None and factor != 1:
            target = Target(
                moe=None if target.moe is None else target.moe / factor,
                moe_table=None if target.moe_table is None else target.moe_table / factor,
            )
        tables.append(dataclasses.replace(spec, survey_weight=None, target=target))
    budget = dataclasses.replace(plan.budget, strategy="workload")
    return dataclasses.replace(plan, tables=tuple(tables), budget=budget)


def scaled_noise(noise: Noise, factor: int) -> Noise:
    """The noise `factor` times as large, its scale rounded up (never below factor·scale)."""
    if factor == 1:
        return noise
    return Noise(noise.mechanism, math.nextafter(noise.scale * factor, math.inf))


def weighted_back(plan: Plan, allocation: Allocation) -> Allocation:
    """The allocation of `as_counts(plan)` for the plan itself: each weighted table with its
    own spec, its sensitivity and noise W times as large."""
    names = weighted_names(plan)
    if not names:
        return allocation
    specs = {spec.name: spec for spec in plan.tables}
    alpha = 1 - allocation.confidence

    def back(table: TableBudget) -> TableBudget:
        spec = specs.get(table.name)
        if spec is None or spec.survey_weight is None:
            return table
        factor = spec.sensitivity_factor
        return priced(
            spec,
            table.cells,
            scaled(table.sensitivity, factor),
            scaled_noise(table.noise, factor),
            alpha,
            budget=(table.epsilon, table.delta, table.rho),
            measured_as=table.measured_as,
        )

    advice = allocation.advice
    if plan.budget.strategy == "auto":
        advice = (LISTED_NOTE.format(names=", ".join(names)), *advice)
    return dataclasses.replace(
        allocation,
        tables=tuple(back(t) for t in allocation.tables),
        measurements=tuple(back(m) for m in allocation.measurements),
        advice=advice,
    )
