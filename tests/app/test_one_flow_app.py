"""Issues 24 and 26: one release flow. A plan made and saved in the dashboard, released by the
CLI and by the dashboard with the same noise, gives the same tables, the same defaults
(consistent) and the same charge to the same ledger account.

The randomness is the only thing replaced: a test-only noise source, seeded from the table (so
that both releases draw the same values whatever the order), standing in for the secure
sampler that makes every real release different; and a fixed seed for the randomised rounding
of the grand total that post-processing of measured marginals does (`postprocess.derived`).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile

import numpy as np
import pytest

from dprelease import cli
from dprelease.accounting.mechanisms import Noise
from dprelease.ledger.store import Ledger
from dprelease.plan.edit import add_table, empty_plan, set_categorical, set_numeric
from dprelease.plan.yaml_text import plan_yaml
from dprelease.postprocess.derived import derived_postprocess
from dprelease.release import service
from helpers.app import ROOT, go, keyed, open_app, workspace
from ui.plan_without_data import plan_with_data_name
from ui.state import records_key


def seeded_noise(true_counts: np.ndarray, noise: Noise, l1: int, l2_squared: int) -> np.ndarray:
    """TEST ONLY: the same noise for the same table (seeded from its true counts and scale)."""
    seed = hashlib.sha256(true_counts.tobytes() + repr(noise.scale).encode()).digest()
    draws = noise.kind.preview(np.random.default_rng(list(seed)), noise.scale, true_counts.size)
    if noise.kind.integer:
        return true_counts.astype(np.int64) + np.asarray(draws, dtype=np.int64)
    return true_counts.astype(np.float64) + draws


def seeded_rounding(*args, **kwargs):
    """TEST ONLY: `derived_postprocess` with its randomised rounding seeded."""
    return derived_postprocess(*args, **kwargs, rng=np.random.default_rng(2024))


def dashboard_plan() -> dict:
    """A plan made with the dashboard's own edits; it leaves `consistent` to the default."""
    plan = empty_plan(epsilon=1.0)
    plan["postprocess"].pop("consistent")  # as a plan written before the default was saved
    plan = set_categorical(plan, "sex", ["Female", "Male"])
    plan = set_categorical(plan, "hispanic", ["Hispanic", "Not Hispanic"])
    plan = set_numeric(plan, "age", [0, 18, 65, 101])
    for by in ([], ["sex"], ["hispanic"], ["age", "sex"], ["hispanic", "sex"]):
        plan = add_table(plan, by)
    return plan


def tables_of(files: dict[str, bytes]) -> dict[str, list[list[str]]]:
    """Each table's rows without its last column (`moe`, simulated afresh by each release)."""
    out = {}
    for name, content in files.items():
        if name.startswith("tables/"):
            rows = [line.split(",") for line in content.decode().splitlines()]
            assert rows[0][-1] == "moe", rows[0]
            out[name] = [row[:-1] for row in rows]
    return out


def test_a_plan_saved_in_the_dashboard_releases_the_same_through_the_cli(
    tmp_path, monkeypatch, ledger_file
):
    monkeypatch.setattr("dprelease.release.draw.secure_noisy_counts", seeded_noise)
    # Issue 26: both front ends release through the one service function; record its calls.
    requests: list[service.ReleaseRequest] = []
    one_flow = service.release_plan

    def recorded(request: service.ReleaseRequest) -> service.ReleaseOutcome:
        requests.append(request)
        return one_flow(request)

    monkeypatch.setattr(service, "release_plan", recorded)
    monkeypatch.setattr("dprelease.release.draw.derived_postprocess", seeded_rounding)
    app = open_app()
    ws = workspace(app)
    ws.plan = dashboard_plan()
    # Saved as the Data page's "Save plan (YAML)" saves it, next to a copy of the data.
    (tmp_path / "plan.yaml").write_text(plan_yaml(plan_with_data_name(ws)))
    shutil.copy(ROOT / "data" / "census_sample.csv", tmp_path / ws.upload.name)

    go(app, "pages/release.py")
    keyed(app.checkbox, "confirm_").check().run()
    app.button(key="create_release").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    with zipfile.ZipFile(io.BytesIO(ws.release.zip_bytes)) as archive:
        dashboard = {name: archive.read(name) for name in archive.namelist()}

    out = tmp_path / "cli-release"
    assert cli.main(["release", str(tmp_path / "plan.yaml"), "--out", str(out)]) == 0
    files = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    assert sorted(files) == sorted(dashboard)
    assert tables_of(files) == tables_of(dashboard)
    ours, theirs = (json.loads(f["metadata.json"]) for f in (files, dashboard))
    assert ours["postprocess"] == theirs["postprocess"]
    assert ours["postprocess"]["consistent"] is True  # the default, in both
    assert ours["postprocess"]["steps_applied"][0] == "consistent"
    assert ours["total"] == theirs["total"]
    # Consistent: every table adds up to the same total.
    totals = {sum(int(row[-1]) for row in rows[1:]) for rows in tables_of(files).values()}
    assert len(totals) == 1
    # The same charge, to the same account of the same ledger ($DPRELEASE_LEDGER).
    book = Ledger(ledger_file)
    entries = book.entries(book.account(records_key(ws)).key)
    assert len(entries) == 2
    charged = (ours["total"]["epsilon"], ours["total"]["delta"] or 0.0)  # pure: δ = 0
    assert {(e.epsilon, e.delta) for e in entries} == {charged}
    assert {e.release_id for e in entries} == {
        ours["ledger"]["release_id"],
        theirs["ledger"]["release_id"],
    }
    assert len({(e.accounting, e.tables) for e in entries}) == 1
    # Through the same function, with the same defaults: charged, to the default ledger.
    assert [type(r.data).__name__ for r in requests] == ["UploadData", "FileData"]
    assert {(r.charge, r.ledger, r.cap, r.plan.postprocess.consistent) for r in requests} == {
        (True, None, None, True)
    }


def test_the_release_page_offers_the_release_as_a_notebook():
    app = go(open_app(), "pages/release.py")
    button = next(b for b in app.get("download_button") if "download_notebook" in b.proto.id)
    assert button.proto.label == "Download as a notebook (.ipynb)"


@pytest.fixture(autouse=True)
def _no_stray_release_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the CLI writes nothing outside the test's folder
