"""The bundled sample's record fingerprint is made once per server and shared between sessions
(it is public); an upload's never is, and the shared one is the key the CLI charges for the
same file (the ledger seam)."""

from __future__ import annotations

from dprelease.data.fingerprint import fingerprint_table
from dprelease.data.read import read_data
from helpers.app import open_app, upload_small_csv, workspace
from ui import state
from ui.state import records_key


def test_only_the_sample_is_shared_and_its_key_is_the_files() -> None:
    app = open_app()
    sample_key = records_key(workspace(app))
    expected = fingerprint_table(read_data(state.SAMPLE_DATA)).key()
    assert sample_key == expected  # the CLI's key for data/census_sample.csv
    shared = dict(state._SAMPLE_FINGERPRINTS)
    assert len(shared) == 1 and next(iter(shared.values())).key() == expected

    upload_small_csv(app)
    upload_key = records_key(workspace(app))
    assert upload_key != sample_key
    assert {fp.key() for fp in state._SAMPLE_FINGERPRINTS.values()} == {expected}  # not kept

    second = open_app()  # a new session on the sample reuses the shared fingerprint
    assert records_key(workspace(second)) == expected
