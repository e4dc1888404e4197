"""Shared test set-up.

Tests are sorted by kind: unit/ (against hand-computed or independent values; one folder per
subpackage of `dprelease/`, e.g. unit/plan/, unit/ledger/; project-wide checks such as the
layer guard and the docs build at its top), property/
(hypothesis), statistical/ (samplers and privacy audits: fit and power), integration/ (the
cross-feature matrix: every command on one plan with every feature), app/ (Streamlit
AppTest), browser/ (the real app in Chromium). Code that several tests share lives in the
`helpers` package next to this file (plans, the CLI runner, AppTest steps, bad inputs, audits):
test modules import helpers, never each other.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from helpers import ROOT

# One BLAS thread per process: the suite runs one worker per core, and OpenBLAS's own threads
# then spin against the other worker's (a Hadamard transform of 2^22 values took 5.2 s instead
# of 0.6 s; one heavy-hitter test 68 s instead of 14). Set before numpy is first imported, so
# the workers, the CLI's child processes and the Streamlit servers all read it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set (as on our machines): otherwise
# each worker rewrote every test module at collection (13 s instead of 8) and every Streamlit
# server and child process compiled the package again. The caches are git-ignored.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# The strategy's searches are not read from, or kept in, the developer's cache folder
# (`strategy/disk_memo.py`): every test searches afresh; the memo's own tests name a folder.
os.environ["DPRELEASE_CACHE"] = "off"

# Hypothesis draws the same examples on every run (a seed per test, from its name): a property
# test's time and outcome never depend on luck, and a failure seen once is seen every time
# (issue 25: "no test may depend on luck for its time"). Tests set their own max_examples.
settings.register_profile("dprelease", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("dprelease")

# Spark's JVM in the suite: a capped heap (a default JVM may take a quarter of the machine's
# memory), one garbage-collector thread and only the quick JIT tier (the tests' jobs are
# kilobytes; the optimising compiler's threads cost more CPU than they save). PySpark reads
# this variable when it starts the JVM; child processes get it through `helpers.cli.child_env`.
SPARK_SUBMIT_ARGS = (
    "--driver-memory 512m --conf "
    '"spark.driver.extraJavaOptions=-XX:+UseSerialGC -XX:TieredStopAtLevel=1" pyspark-shell'
)
os.environ.setdefault("PYSPARK_SUBMIT_ARGS", SPARK_SUBMIT_ARGS)


def _scan_components_once() -> None:
    """Every AppTest starts a Streamlit runtime, which reads the metadata of every installed
    package for custom components (about 0.6 s each time, some 3 minutes over the suite). The
    installed packages do not change during a run, so the first scan's answer is kept; the
    real server (`streamlit run`, the browser tests) still scans once at its start."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # another Streamlit: nothing to keep
        return
    manifest_scanner.scan_component_manifests = functools.cache(
        manifest_scanner.scan_component_manifests
    )


_scan_components_once()

# pytest-xdist (`-n 2 --dist loadgroup`, the README's command): tests that start a heavy
# process share one worker, so at most one Chromium + Streamlit server and one Spark JVM run at
# a time, and the other worker takes the light tests (the suite's peak memory stays < 3 GB).


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups (else: no group)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.xdist_group("browser"))
        elif "spark" in item.nodeid.lower():
            item.add_marker(pytest.mark.xdist_group("spark"))
    # A test that starts Spark in a child process runs first, before its worker's own JVM
    # starts (the group's other tests keep theirs): two JVMs at once were 0.9 GB of a peak.
    items.sort(key=lambda item: item.get_closest_marker("child_jvm") is None)


@pytest.hookimpl(trylast=True)  # after xdist has written each group into its tests' ids
def pytest_collection_finish(session: pytest.Session) -> None:
    """Fail loudly when pytest-xdist's loadgroup ignores the groups: with pytest 9.2 and
    xdist 3.8 it did, silently, and two Chromiums and two JVMs ran at once (issue 25)."""
    if not getattr(session.config.option, "loadgroup", False):  # not under xdist
        return
    grouped = [
        (item, marker.args[0] if marker.args else marker.kwargs.get("name"))
        for item in session.items
        if (marker := item.get_closest_marker("xdist_group")) is not None
    ]
    if grouped and not grouped[0][0].nodeid.endswith(f"@{grouped[0][1]}"):
        raise pytest.UsageError(
            "pytest-xdist did not take the test groups (pytest "
            f"{pytest.__version__}); install the versions in requirements-dev.txt."
        )


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, which gives the C heap's free pages back to the system (None
    elsewhere). Looked up once: finding the library runs ldconfig."""
    name = ctypes.util.find_library("c")
    return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    """After each test, the memory it freed goes back to the system. glibc keeps a freed heap
    for reuse, so a test worker's size was the sum of every test's high-water mark (e.g. 630 MB
    after the xlsx bombs, 280 MB once trimmed) and two workers held 2.7 GB at the suite's peak
    (issue 25). A trim costs under a millisecond when there is nothing to give back."""
    yield
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@pytest.fixture(autouse=True)
def ledger_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own ledger file ($DPRELEASE_LEDGER): `release` charges a ledger
    unless told `--no-ledger` (issue 24), and no test may write to ~/.dprelease or see another
    test's charges. Child processes get it through `helpers.cli.child_env`."""
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPRELEASE_LEDGER", str(path))
    return path


@pytest.fixture
def sample_plan() -> Path:
    """The bundled sample plan (data/census_sample.plan.yaml)."""
    return ROOT / "data" / "census_sample.plan.yaml"


# --- ledgers on both backends (issue 34): an SQLite file, or a schema on a PostgreSQL server


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The test PostgreSQL server's owner URL (`helpers.postgres`): skipped where PostgreSQL
    is not installed, but a failure under CI=1 (as for Spark and Chromium)."""
    from helpers.postgres import server_url

    url = server_url()
    if url is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs PostgreSQL for the shared-ledger tests (.ci/run starts it)")
        pytest.skip("no PostgreSQL here (apt-get install postgresql)")
    return url


@pytest.fixture
def postgres_ledger(postgres_server: str):  # type: ignore[no-untyped-def]
    """The owner's URL of a fresh, empty ledger schema (dropped after the test)."""
    from helpers.postgres import fresh_schema

    with fresh_schema(postgres_server) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_at(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """Where a new ledger lives: an SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return tmp_path / "l.sqlite"
    return str(request.getfixturevalue("postgres_ledger"))
