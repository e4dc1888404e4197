"""Issue 37.4: budgets add as the decimals people type, rounded toward the safe side."""

import json
import random
import sqlite3
from fractions import Fraction

import pytest

from dprelease.accounting.composition import (
    Guarantee,
    decimal_cover,
    decimal_down,
    decimal_up,
    round_up,
    spendable,
    typed_value,
)
from dprelease.errors import BudgetError
from dprelease.ledger.accounts import FORMAT
from dprelease.ledger.store import Ledger
from dprelease.stats.allocation import plan_allocation
from helpers.plans import make_plan

A = "a" * 64


def charge(ledger: Ledger, release_id: str, epsilon: float) -> None:
    with ledger.charge(A, release_id, Guarantee(epsilon, None), label="p", tables=["t"]):
        pass


def test_one_and_four_tenths_leave_exactly_a_tenth_of_one_and_a_half(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.set_cap(A, 1.5)
    charge(ledger, "one", 0.4)
    charge(ledger, "two", 1.0)
    balance = ledger.balance(A)
    assert (balance.spent_epsilon, balance.composed.epsilon, balance.left_epsilon) == (
        1.4,
        1.4,
        0.1,
    )
    charge(ledger, "three", 0.1)  # the floats add to 1.5000000000000002 and were refused
    assert ledger.balance(A).left_epsilon == 0.0
    with pytest.raises(BudgetError):
        charge(ledger, "four", 1e-9)


def test_reported_values_bound_the_spend_read_as_a_float_and_as_their_decimal():
    rng = random.Random(374)
    for _ in range(2000):
        value = Fraction(rng.randrange(1, 10**18), rng.randrange(1, 10**18))
        spent = round_up(value)  # a computed total, as composition rounds it
        covered = decimal_cover(spent)
        assert Fraction(covered) >= value and typed_value(covered) >= value
        assert decimal_cover(covered) == covered  # a fixed point: reported twice, not raised
        assert typed_value(decimal_up(value)) >= value >= typed_value(decimal_down(value))
        assert typed_value(spendable(float(value))) <= typed_value(float(value))


def test_locks_that_add_up_in_decimals_fit_the_total_and_spend_no_more():
    # 0.1 + 0.2 > 0.3 as floats: this plan stopped with an internal error
    tables = [
        {"name": "sex", "by": ["sex"], "epsilon": 0.1},
        {"name": "race", "by": ["race"], "epsilon": 0.2},
    ]
    allocation = plan_allocation(make_plan(tables, accounting="pure", epsilon=0.3, delta=None))
    assert allocation.total.epsilon == 0.3
    spent = sum((Fraction(t.epsilon) for t in allocation.tables), Fraction(0))
    assert spent <= Fraction(3, 10)  # the typed decimal bounds the spend
    shown = [t.to_dict() for t in allocation.tables]
    assert [(t["epsilon"], t["noise_scale"]) for t in shown] == [(0.1, 10.0), (0.2, 5.0)]


def test_a_budget_of_four_tenths_spends_at_most_two_fifths():
    plan = make_plan(accounting="pure", epsilon=0.4, delta=None)
    allocation = plan_allocation(plan)
    spent = sum((Fraction(t.epsilon) for t in allocation.tables), Fraction(0))
    assert spent <= Fraction(2, 5) < Fraction(0.4)
    assert allocation.total.epsilon == 0.4


def test_locks_over_the_total_are_the_users_to_fix_not_an_internal_error():
    tables = [
        {"name": "sex", "by": ["sex"], "epsilon": 0.1},
        {"name": "race", "by": ["race"], "epsilon": 0.25},
    ]
    with pytest.raises(BudgetError, match="locked budgets add up to more"):
        plan_allocation(make_plan(tables, accounting="pure", epsilon=0.3, delta=None))


def test_an_older_ledgers_charges_are_raised_to_a_decimal_that_bounds_them(tmp_path):
    path = tmp_path / "l.sqlite"
    ledger = Ledger(path)
    charge(ledger, "old", 0.4)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 4")  # as format 4 wrote it
    conn.close()
    Ledger(path)  # the upgrade
    with sqlite3.connect(path) as conn:
        (stored,) = conn.execute("SELECT epsilon FROM charges").fetchone()
        assert conn.execute("PRAGMA user_version").fetchone()[0] == FORMAT
    conn.close()
    assert typed_value(stored) >= Fraction(0.4) and Fraction(stored) >= Fraction(0.4)


def test_ledger_show_json_reads_as_typed(tmp_path):
    from helpers.cli import run

    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.set_cap(A, 1.5)
    charge(ledger, "one", 0.4)
    charge(ledger, "two", 1.0)
    shown = json.loads(
        run("ledger", "show", "--ledger", str(tmp_path / "l.sqlite"), "--json").stdout
    )
    account = shown["datasets"][0]
    assert account["spent"]["epsilon"] == 1.4 and account["left"]["epsilon"] == 0.1


def test_a_format_4_ledger_is_upgraded_on_either_backend(ledger_at):
    """The upgrade through the ledger's own connection: SQLite and a real PostgreSQL server."""
    ledger = Ledger(ledger_at)
    charge(ledger, "old", 0.4)
    with ledger._connection() as conn:
        conn.begin_write()
        conn.execute("UPDATE charges SET epsilon = ?", (0.4,))
        conn.set_version(4)
        conn.commit()
    upgraded = Ledger(ledger_at)
    with upgraded._connection() as conn:
        conn.begin_read()
        (stored,) = conn.execute("SELECT epsilon FROM charges").fetchone()
        assert conn.version() == FORMAT
        conn.rollback()
    assert typed_value(stored) >= Fraction(0.4) and Fraction(stored) >= Fraction(0.4)
    assert upgraded.balance(A).spent_epsilon == decimal_up(typed_value(stored))
