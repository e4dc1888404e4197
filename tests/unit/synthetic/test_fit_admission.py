"""Issue 35, finding 5: synthetic microdata that `plan` accepted and `release` could not fit
(three tables over three 200-valued columns, a cycle of 8 M model cells: 40 s, then out of
memory; k two-valued columns with every pair a table: k = 18 over 300 s, k = 20 out of
memory). The fit is now admitted from the plan by its real work (rounds × cells × tables
inside, `SYNTHETIC_FIT_WORK`) and the maps it keeps (`SYNTHETIC_FIT_BYTES`), before any
noise: fewer rounds where they fit, else one line naming the limit."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import numpy as np
import pytest

from dprelease.errors import PlanError
from dprelease.limits import SYNTHETIC_FIT_WORK, SYNTHETIC_IPF_ROUNDS
from dprelease.plan.parse import loads_plan
from dprelease.synthetic.fit import fit_cliques
from dprelease.synthetic.junction import check_model
from helpers.cli import run

REST = "budget: {epsilon: 1}\npostprocess: {synthetic: true}\n"


def _pairs_plan(k: int) -> str:
    columns = "\n".join(f"  c{i}: {{kind: categorical, domain: [a, b]}}" for i in range(k))
    tables = "\n".join(
        f"  - {{name: t{i}_{j}, by: [c{i}, c{j}]}}" for i, j in itertools.combinations(range(k), 2)
    )
    return f"columns:\n{columns}\ntables:\n{tables}\n{REST}"


def _cycle_plan(values: int) -> str:
    domain = ", ".join(f"v{j}" for j in range(values))
    columns = "\n".join(f"  c{i}: {{kind: categorical, domain: [{domain}]}}" for i in range(3))
    tables = "\n".join(
        f"  - {{name: t{a}{b}, by: [c{a}, c{b}]}}" for a, b in ((0, 1), (1, 2), (0, 2))
    )
    return f"columns:\n{columns}\ntables:\n{tables}\n{REST}"


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        (_pairs_plan(18), "cell updates a round"),  # was over 300 s in the fit
        (_pairs_plan(20), "MB of cell maps"),  # was out of memory
        (_cycle_plan(200), "cell updates a round"),  # 8 M cells: 40 s, then out of memory
    ],
)
def test_a_fit_beyond_its_work_is_refused_from_the_plan_in_one_line(text: str, limit: str):
    started = time.process_time()
    with pytest.raises(PlanError, match=limit) as refused:
        check_model(loads_plan(text, "yaml"))
    assert time.process_time() - started < 2
    assert "\n" not in str(refused.value) and "switch synthetic off" in str(refused.value)


def test_plan_refuses_it_in_one_line_and_charges_nothing(tmp_path: Path):
    path = tmp_path / "p.yaml"
    path.write_text(_pairs_plan(18))
    result = run("plan", str(path))
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cell updates a round" in lines[0], result.stderr


def test_a_fit_that_fits_with_fewer_rounds_runs_them_in_seconds():
    """16 two-valued columns, every pair a table, tables that agree on nothing (IPF never
    converges): the rounds that fit the work bound, a few seconds in all."""
    plan = loads_plan(_pairs_plan(16), "yaml")
    tree = check_model(plan)
    per_round = 65_536 * (120 + 1)
    assert tree.rounds == min(SYNTHETIC_IPF_ROUNDS, SYNTHETIC_FIT_WORK // per_round) < 500
    rng = np.random.default_rng(4)
    released = {
        spec.name: rng.multinomial(10_000, rng.dirichlet(np.full(4, 0.3))) for spec in plan.tables
    }
    started = time.process_time()
    tables = fit_cliques(plan, tree, released, rng)
    assert time.process_time() - started < 20  # 3.4 s alone; 500 rounds took about 27 s
    assert tables[0].sum() == 10_000 or tables[0].sum() > 0
