"""The one release service (issue 26): `release_plan(ReleaseRequest)`, which the CLI, the
Release page and the exported code all call. Its defaults are the house's: charged to the
default ledger ($DPRELEASE_LEDGER here), `consistent` on when the plan leaves it out; with
`charge=False` no ledger is touched and the metadata say `"ledger": null`."""

from __future__ import annotations

import json

import pytest

from dprelease.errors import BudgetError
from dprelease.ledger.store import Ledger
from dprelease.plan.parse import load_plan, parse_plan, plan_to_dict
from dprelease.release.service import FileData, ReleaseRequest, UploadData, release_plan
from helpers import ROOT

SAMPLE_PLAN = ROOT / "data" / "census_sample.plan.yaml"
SAMPLE_DATA = ROOT / "data" / "census_sample.csv"


def test_a_request_charges_the_default_ledger_once(ledger_file):
    raw = plan_to_dict(load_plan(SAMPLE_PLAN))
    raw["postprocess"].pop("consistent")  # left to the default
    plan = parse_plan(raw)
    outcome = release_plan(ReleaseRequest(plan, FileData(SAMPLE_DATA)))
    assert outcome.entry is not None and outcome.account is not None
    book = Ledger(ledger_file)
    entries = book.entries(book.account(outcome.account.records).key)
    assert [e.release_id for e in entries] == [outcome.entry.release_id]
    meta = json.loads(outcome.files["metadata.json"])
    assert meta["ledger"]["release_id"] == outcome.entry.release_id
    assert meta["postprocess"]["consistent"] is True
    assert meta["postprocess"]["steps_applied"][0] == "consistent"


def test_the_file_and_the_upload_find_the_same_account_and_charge(ledger_file):
    plan = load_plan(SAMPLE_PLAN)
    by_file = release_plan(ReleaseRequest(plan, FileData(SAMPLE_DATA)))
    upload = UploadData(SAMPLE_DATA.read_bytes(), SAMPLE_DATA.name)
    by_upload = release_plan(ReleaseRequest(plan, upload))
    assert by_file.account is not None and by_upload.account is not None
    assert by_file.account.records == by_upload.account.records
    assert by_file.account.legacy == by_upload.account.legacy
    assert by_file.entry is not None and by_upload.entry is not None
    assert (by_file.entry.epsilon, by_file.entry.delta, by_file.entry.tables) == (
        by_upload.entry.epsilon,
        by_upload.entry.delta,
        by_upload.entry.tables,
    )
    assert sorted(by_file.files) == sorted(by_upload.files)


def test_uncharged_touches_no_ledger_and_says_so(ledger_file, tmp_path):
    plan = load_plan(SAMPLE_PLAN)
    out = tmp_path / "r.zip"
    outcome = release_plan(ReleaseRequest(plan, FileData(SAMPLE_DATA), charge=False, out=out))
    assert outcome.entry is None and outcome.account is None
    assert json.loads(outcome.files["metadata.json"])["ledger"] is None
    assert outcome.written == out and out.is_file()
    assert not ledger_file.exists()


def test_a_cap_needs_a_ledger():
    plan = load_plan(SAMPLE_PLAN)
    with pytest.raises(BudgetError, match="cannot go with --no-ledger"):
        ReleaseRequest(plan, FileData(SAMPLE_DATA), charge=False, cap=3.0)
