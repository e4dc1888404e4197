"""Issue 35, finding 3: a noisy table whose cells the invariants, structural zeros and
one-value columns fix exactly is refused at `plan`/`validate`, in one line naming it.

Before, `a × c` with `c: {domain: [only]}` equalled the invariant `a`, and `c` the row count,
both published with a DP margin; the same through a structural zero.
"""

from __future__ import annotations

import pytest

from dprelease import cli
from dprelease.errors import PlanError
from dprelease.plan.parse import loads_plan

ONE_VALUE = """
columns:
  a: {kind: categorical, domain: [x, y, z]}
  b: {kind: categorical, domain: [p, q]}
  c: {kind: categorical, domain: [only]}
tables:
  - {name: a, by: [a], invariant: true}
  - {name: TABLE, by: BY}
budget: {epsilon: 1}
"""
THROUGH_A_ZERO = """
columns:
  a: {kind: categorical, domain: [x, y, z]}
  b: {kind: categorical, domain: [p, q]}
tables:
  - {name: a, by: [a], invariant: true}
  - {name: a_by_b, by: [a, b]}
structural_zeros:
  - {b: [q]}
budget: {epsilon: 1}
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(PlanError) as caught:
        loads_plan(text, "yaml")
    return caught.value.problems or [str(caught.value)]


@pytest.mark.parametrize(("table", "by"), [("a_by_c", "[a, c]"), ("c", "[c]")])
def test_a_table_a_one_value_column_makes_exact_is_refused(table, by):
    problems = _problems(ONE_VALUE.replace("TABLE", table).replace("BY", by))
    assert any(f"Table '{table}' would be published exact" in p for p in problems), problems


def test_a_table_a_structural_zero_makes_exact_is_refused():
    problems = _problems(THROUGH_A_ZERO)
    assert any("Table 'a_by_b' would be published exact" in p for p in problems), problems


def test_noisy_tables_the_invariants_do_not_fix_are_kept():
    loads_plan(ONE_VALUE.replace("TABLE", "a_by_b").replace("BY", "[a, b]"), "yaml")
    three = THROUGH_A_ZERO.replace("[p, q]", "[p, q, r]")
    loads_plan(three.replace("{b: [q]}", "{a: [x], b: [q]}"), "yaml")  # x·p + x·r = a[x] only


def test_one_zero_cell_of_a_two_valued_column_fixes_the_other():
    """Zero x·q with b = {p, q}: x·p equals the invariant a[x]."""
    problems = _problems(THROUGH_A_ZERO.replace("{b: [q]}", "{a: [x], b: [q]}"))
    assert any("Table 'a_by_b' would be published exact" in p for p in problems), problems


def test_plan_refuses_it_in_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "plan.yaml"
    path.write_text(THROUGH_A_ZERO)
    assert cli.main(["plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "'a_by_b'" in err


def test_a_table_whose_every_cell_is_a_zero_is_not_fixed_by_rank() -> None:
    """Found by the property test's larger plans (issue 35): a zero over a one-value column's
    only value leaves the rank check no free cell; it raised a bare ValueError (exit 1). Now
    the zero rule names the table, in one line."""
    problems = _problems(
        """
columns:
  a: {kind: categorical, domain: [x, y, z]}
  c: {kind: categorical, domain: [only]}
tables:
  - {name: a, by: [a], invariant: true}
  - {name: c, by: [c]}
structural_zeros:
  - {c: [only]}
budget: {epsilon: 1}
"""
    )
    assert any("every cell of table 'c' zero" in p for p in problems), problems
