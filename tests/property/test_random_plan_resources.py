"""Issue 25 point 1: every small plan is allocated within the resource bound, or refused.

Hypothesis draws plans (tests/helpers/random_plans.py: 1–8 columns of 1–12 values, at times a
hierarchy, 1–8 tables, every accountant, allocation and strategy, ε from 1e-4 to 100, δ from
1e-12 to 1e-6). Each is allocated (what `plan` prints) in a forked child, whose CPU time and
peak memory the kernel measures: CPU time, not wall time, so that other work on the machine
does not decide the outcome, and limits five times the target (2 s, 500 MB) for the same
reason. The bound itself is deterministic (estimated work, counted; `strategy.cost`,
`accounting.cost`), so a plan over it is over it on every run.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dprelease.accounting.allocation import allocate
from dprelease.plan.parse import parse_plan
from helpers.random_plans import random_plan
from helpers.resources import in_child

CPU_SECONDS = 10.0
PEAK_MB = 500.0


@pytest.fixture(scope="module", autouse=True)
def _imported() -> None:
    """The lazily imported modules (dp_accounting: 1.3 s CPU) imported once, here, so every
    forked child inherits them: the bound is on the work of a plan, not on one-off imports."""
    from dprelease.accounting import strategy_allocation  # noqa: F401
    from dprelease.accounting.dgauss_pld import _pld_module

    _pld_module()


def _allocated_within_budget(raw: dict) -> None:
    allocation = allocate(parse_plan(raw))
    if allocation.total.epsilon is not None:
        assert allocation.total.epsilon <= raw["budget"]["epsilon"]  # never overspent


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_every_small_plan_is_allocated_within_the_bound_or_refused(data):
    raw = random_plan(
        lambda low, high: data.draw(st.integers(low, high)),
        lambda items: data.draw(st.sampled_from(list(items))),
        lambda low, high: data.draw(st.floats(low, high)),
    )
    run = in_child(lambda: _allocated_within_budget(raw))
    assert run.code in (0, 2), f"exit {run.code}: {raw}"  # done, or refused (DPReleaseError)
    assert run.cpu_seconds <= CPU_SECONDS, f"{run.cpu_seconds:.1f} s CPU: {raw}"
    assert run.growth_mb <= PEAK_MB, f"{run.growth_mb:.0f} MB: {raw}"
