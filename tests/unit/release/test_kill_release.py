"""Issue 11, High 2: a release killed at the dangerous moment is never delivered uncharged.

A real `dprelease release --ledger` process on the bundled sample. The test watches the output
folder and stops the process (SIGSTOP) the instant anything of the release appears there (the
staging folder or the output). At that instant the charge must already be committed, and the
staging folder must be 0700. Then the process is killed (SIGKILL or SIGTERM) and a second run
in the same folder removes what the killed one left.
"""

import os
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dprelease.ledger.store import Ledger
from helpers import ROOT
from helpers.cli import child_env
from helpers.inotify import wait_for_entry

PLAN = ROOT / "data" / "census_sample.plan.yaml"
DATA = ROOT / "data" / "census_sample.csv"


def start(out: Path, ledger: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dprelease",
            "release",
            str(PLAN),
            "--data",
            str(DATA),
            "--out",
            str(out),
            "--ledger",
            str(ledger),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=child_env(),
    )


def charges(ledger: Path) -> int:
    """Committed charges, read as any other reader would (WAL: never blocked by the writer)."""
    with sqlite3.connect(ledger) as conn:
        count = int(conn.execute("SELECT count(*) FROM charges").fetchone()[0])
    conn.close()
    return count


def stop_when_something_appears(process: subprocess.Popen[str], folder: Path) -> list[Path]:
    """SIGSTOP the process the instant an entry appears in `folder` (inotify wakes us: no
    core is spent polling while the release computes)."""
    if wait_for_entry(folder, 240, lambda: process.poll() is not None):
        process.send_signal(signal.SIGSTOP)
        return list(folder.iterdir())
    return []


@pytest.mark.parametrize(
    ("name", "kill"),
    [("r.zip", signal.SIGKILL), ("r.zip", signal.SIGTERM), ("r_dir", signal.SIGKILL)],
)
def test_nothing_of_a_release_is_on_disk_before_its_charge_commits(tmp_path, name, kill):
    out_folder = tmp_path / "out"
    out_folder.mkdir()
    ledger = tmp_path / "l.sqlite"
    Ledger(ledger)
    process = start(out_folder / name, ledger)
    try:
        seen = stop_when_something_appears(process, out_folder)
        assert seen, (
            f"the release never appeared: {process.stderr.read() if process.stderr else ''}"
        )
        # The dangerous moment: something of the release is on disk. It must be charged.
        assert charges(ledger) == 1
        for entry in seen:
            if entry.name.startswith(".dprelease"):
                assert stat.S_IMODE(entry.lstat().st_mode) == 0o700, entry
        process.send_signal(kill)
        process.send_signal(signal.SIGCONT)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()
    assert charges(ledger) == 1  # charged, maybe not delivered: the safe direction
    again = start(out_folder / f"again-{name}", ledger)
    _, err = again.communicate(timeout=240)
    assert again.returncode == 0, err
    left = [p.name for p in out_folder.iterdir() if p.name.startswith(".dprelease")]
    assert left == [], left  # the killed run's staging is gone
    assert charges(ledger) == 2


def test_staging_of_a_live_process_is_not_removed(tmp_path):
    from dprelease.release.export import STAGING_PREFIX, clean_stale_staging

    live = tmp_path / f"{STAGING_PREFIX}{os.getpid()}-x"
    live.mkdir(mode=0o700)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = tmp_path / f"{STAGING_PREFIX}{dead.pid}-y"
    gone.mkdir(mode=0o700)
    (gone / "release.zip").write_bytes(b"x")
    assert clean_stale_staging(tmp_path) == [gone]
    assert live.exists() and not gone.exists()
