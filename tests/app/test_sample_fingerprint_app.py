"""What the bundled sample and its plan give (parsed table, record fingerprint, plan check and
allocation, coverage) is made once per server and shared between sessions (both are public);
an upload's never is, nor a changed plan's, and the shared fingerprint is the key the CLI
charges for the same file (the ledger seam)."""

from __future__ import annotations

from dprelease.data.fingerprint import fingerprint_table
from dprelease.data.read import read_data
from helpers.app import open_app, upload_small_csv, workspace
from ui import state
from ui.sample_memo import kept
from ui.state import records_key


def test_only_the_sample_is_shared_and_its_key_is_the_files() -> None:
    app = open_app()
    sample_key = records_key(workspace(app))
    expected = fingerprint_table(read_data(state.SAMPLE_DATA)).key()
    assert sample_key == expected  # the CLI's key for data/census_sample.csv
    assert [fp.key() for fp in kept("fingerprint")] == [expected]
    table = state.parsed_table(workspace(app))

    upload_small_csv(app)
    upload_key = records_key(workspace(app))
    assert upload_key != sample_key
    assert [fp.key() for fp in kept("fingerprint")] == [expected]  # the upload's is not kept
    assert kept("table") == [table]  # nor its parsed table
    assert state.coverage(workspace(app)) not in kept("coverage")

    second = open_app()  # a new session on the sample reuses what was made for the first
    assert records_key(workspace(second)) == expected
    assert state.parsed_table(workspace(second)) is table
    assert state.coverage(workspace(second)) is kept("coverage")[0]
    assert state.current_allocation(workspace(second))[1] is kept("checked")[0][1]


def test_a_changed_plan_on_the_sample_is_not_shared() -> None:
    app = open_app()
    shared_check = kept("checked")[0]
    ws = workspace(app)
    ws.plan["budget"]["epsilon"] = 0.5  # a plan of this session only
    assert state.current_allocation(ws) is not shared_check
    assert kept("checked") == [shared_check]
    assert state.current_allocation(ws)[2] is None  # a valid plan, allocated for this session
    assert state.coverage(ws) is not kept("coverage")[0]
