"""The sparse vector's table suggestion (issue 16): answers, halting, and its ledger charge."""

from pathlib import Path

import pyarrow as pa
import pytest

from dprelease.data.count import count, load_data
from dprelease.data.fingerprint import fingerprint_table
from dprelease.errors import BudgetError
from dprelease.ledger.store import Ledger
from dprelease.plan.parse import load_plan
from dprelease.release.publish import Account
from dprelease.release.suggest import Question, candidates_plan, charged_suggestion, suggest
from helpers.cli import ROOT, SAMPLE_PLAN

NAMES = ("sex", "state", "age_by_sex")


@pytest.fixture(scope="module")
def counted():
    plan = candidates_plan(load_plan(SAMPLE_PLAN), NAMES)
    return plan, count(load_data(ROOT / "data" / "census_sample.csv", plan), plan)


def test_large_cells_are_above_a_small_threshold_and_it_halts_after_c(counted) -> None:
    plan, counts = counted
    assert suggest(plan, counts, Question(NAMES, 1, 1.0, 3)).answer.above == (True, True, True)
    assert suggest(plan, counts, Question(NAMES, 1, 1.0, 1)).answer.above == (True, None, None)
    assert suggest(plan, counts, Question(NAMES, 10**7, 1.0, 3)).answer.above == (
        False,
        False,
        False,
    )


def test_the_charge_comes_first_and_a_full_cap_refuses_before_drawing(counted, tmp_path: Path):
    plan, counts = counted
    ledger = Ledger(tmp_path / "l.sqlite")
    account = Account(ledger, fingerprint_table(pa.table({"x": [1, 2, 3]})))
    key = account.records
    account.set_cap(0.15)
    done = charged_suggestion(
        plan, counts, Question(NAMES, 1, 0.1, 2), account=account, release_id="a"
    )
    assert done.answer.positives == (0, 1) and ledger.balance(key).spent_epsilon == 0.1
    with pytest.raises(BudgetError):
        charged_suggestion(
            plan, counts, Question(NAMES, 1, 0.1, 2), account=account, release_id="b"
        )
    assert len(ledger.entries(key)) == 1
