"""Issue 35: every small release is admitted and answers within the bound, or is refused.

Hypothesis draws plans of at most 10 KB (tests/helpers/random_releases.py: the resource
test's random tables under every accountant, allocation and strategy, with statistics of
every kind and method, invariant tables, structural zeros, synthetic microdata and
hierarchies, half of them with up to 220 more tables and 8 more statistics) and up to 10,000
rows that fit them; and, for the stages that read no plan (tests/helpers/random_stages.py),
edge lists of up to 10,000 edges for `graph` (the k-degree risk and a degree histogram) and
answer files of up to 10,000 respondents for `ldp` (heavy hitters, itemsets, simulate), run
as the command line runs them (admission first). `plan` (parse, admit, allocate) must answer
within 2 s of CPU; `release` with no ledger, through the one release flow, within 5 s of CPU
and 1 GB, or refuse (exit 2) within 2 s. Each runs in a forked child whose CPU time and peak
memory the kernel measures; the modules are imported once before, as the commands have them
after start-up. CPU time, not wall time, so that other work on the machine does not decide
the outcome; `SLACK` allows for two busy shared cores (CPU time rises about 1.5× under the
suite's load here). `bench/bench_admission.py` runs many more examples.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers.random_releases import (
    MAX_PLAN_BYTES,
    plan_bytes,
    plan_in_process,
    random_release,
    release_in_process,
    write_rows,
)
from helpers.random_stages import cli_in_process, random_answers, random_graph
from helpers.resources import in_child

SLACK = 2.0
PLAN_CPU = 2.0 * SLACK
RELEASE_CPU = 5.0 * SLACK
REFUSAL_CPU = 2.0 * SLACK
PEAK_MB = 1000.0


@pytest.fixture(scope="module", autouse=True)
def _imported() -> None:
    """What the commands have imported by the time they work (scipy, OpenDP, dp_accounting)."""
    from dprelease.accounting import strategy_allocation  # noqa: F401
    from dprelease.accounting.dgauss_pld import _pld_module
    from dprelease.graph import release as graph_release  # noqa: F401
    from dprelease.ldp import heavy_hitters, itemsets, simulation  # noqa: F401
    from dprelease.release import admitted, service  # noqa: F401
    from dprelease.release.noise import warm_up

    _pld_module()
    warm_up()


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_every_small_release_answers_within_the_bound_or_is_refused(data, tmp_path_factory):
    raw, rows = random_release(
        lambda low, high: data.draw(st.integers(low, high)),
        lambda items: data.draw(st.sampled_from(list(items))),
        lambda low, high: data.draw(st.floats(low, high)),
    )
    assume(plan_bytes(raw) <= MAX_PLAN_BYTES)
    planned = in_child(lambda: plan_in_process(raw))
    assert planned.code in (0, 2), f"plan: exit {planned.code}: {raw}"
    assert planned.cpu_seconds <= PLAN_CPU, f"plan: {planned.cpu_seconds:.1f} s CPU: {raw}"
    path = Path(tmp_path_factory.mktemp("rows")) / "data.csv"
    write_rows(raw, rows, path, seed=rows)
    run = in_child(lambda: release_in_process(raw, path))
    assert run.code in (0, 2), f"release: exit {run.code}: {raw}"
    limit = RELEASE_CPU if run.code == 0 else REFUSAL_CPU
    assert run.cpu_seconds <= limit, f"release: {run.cpu_seconds:.1f} s CPU ({rows} rows): {raw}"
    assert run.growth_mb <= PEAK_MB, f"release: {run.growth_mb:.0f} MB: {raw}"


def _answers_within_the_bound(commands: list[list[str]]) -> None:
    for argv in commands:
        run = in_child(lambda a=argv: cli_in_process(a))  # type: ignore[misc]
        assert run.code in (0, 2), f"exit {run.code}: {argv}"
        limit = RELEASE_CPU if run.code == 0 else REFUSAL_CPU
        assert run.cpu_seconds <= limit, f"{run.cpu_seconds:.1f} s CPU: {argv}"
        assert run.growth_mb <= PEAK_MB, f"{run.growth_mb:.0f} MB: {argv}"


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_small_graph_command_answers_within_the_bound_or_is_refused(data, tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("graph")) / "edges.csv"
    commands = random_graph(
        lambda low, high: data.draw(st.integers(low, high)),
        lambda items: data.draw(st.sampled_from(list(items))),
        path,
    )
    _answers_within_the_bound(commands)


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_small_ldp_command_answers_within_the_bound_or_is_refused(data, tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("ldp")) / "answers.csv"
    commands = random_answers(
        lambda low, high: data.draw(st.integers(low, high)),
        lambda items: data.draw(st.sampled_from(list(items))),
        path,
    )
    _answers_within_the_bound(commands)
