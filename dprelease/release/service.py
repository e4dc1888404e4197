"""The one release flow of the CLI and the dashboard: which ledger, which account, its checks.

Issue 24/26: both front ends used to build the ledger and the account each in its own way, and
the CLI charged nothing unless asked. Now both call these functions, so a plan released from
either has the same defaults (the plan's, `dprelease.plan.model`), is charged to the same
account of the same ledger, and is checked against the same caps:

- the ledger is `$DPRELEASE_LEDGER`, else ~/.dprelease/ledger.sqlite, unless a path is given;
- the account is the records' fingerprint, the plan's `dataset:` name, and the file's SHA-256
  (which finds an account of a format-1 ledger);
- the charge is `dprelease.release.publish.charged_release` (the one charged flow);
- an uncharged release (the CLI's `--no-ledger`, said out loud) says `"ledger": null` in
  its metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dprelease.accounting.allocation import Allocation
from dprelease.accounting.composition import Guarantee
from dprelease.data.count import TrueCounts
from dprelease.data.fingerprint import RecordFingerprint
from dprelease.ledger.files import default_ledger_path
from dprelease.ledger.store import Ledger
from dprelease.ledger.values import Account as ResolvedAccount
from dprelease.plan.model import Plan
from dprelease.release.draw import Release, draw_release
from dprelease.release.export import release_files
from dprelease.release.publish import Account
from dprelease.release.statistics import Counter
from dprelease.stats.source import StatSource

NO_LEDGER_WARNING = (
    "warning: --no-ledger: this release is charged to no ledger, so no lifetime cap limits it "
    'and nothing records what it spent; its metadata.json says "ledger": null.'
)


def open_ledger(path: str | Path | None = None) -> Ledger:
    """The ledger at `path`, else $DPRELEASE_LEDGER, else ~/.dprelease/ledger.sqlite."""
    return Ledger(Path(path) if path else default_ledger_path())


def account_of(
    ledger: Ledger, fingerprint: RecordFingerprint, dataset: str | None, file_sha256: str | None
) -> Account:
    """Where a release of these records is charged: their fingerprint (its key picks the
    account), the plan's `dataset:` name, and the data file's SHA-256 (None for a folder of
    parts)."""
    return Account(ledger, fingerprint, dataset, file_sha256)


def resolve_account(account: Account) -> ResolvedAccount:
    """The account as the ledger knows it (registered on first use; `notice` says when a name
    or an old ledger's key decided it)."""
    return account.ledger.account(account.records, account.name, account.legacy)


def check_fits(account: Account, total: Guarantee) -> None:
    """Raise BudgetError unless `total` fits the account's lifetime caps (ε, and δ)."""
    account.ledger.check(account.records, total, name=account.name, legacy=account.legacy)


def set_cap(account: Account, epsilon: float | None) -> None:
    """Set (None: remove) the account's lifetime ε cap."""
    account.ledger.set_cap(account.records, epsilon, name=account.name, legacy=account.legacy)


def uncharged_release(
    plan: Plan,
    allocation: Allocation,
    true_counts: TrueCounts | Counter,
    statistics_source: StatSource | None = None,
) -> tuple[Release, dict[str, bytes]]:
    """The release and its files, charged to no ledger (the CLI's `--no-ledger` only): the
    metadata says `"ledger": null`."""
    release = draw_release(plan, true_counts, allocation, statistics_source=statistics_source)
    return release, release_files(release, ledger=None)


def data_account(ledger: Ledger, data: bytes, filename: str, dataset: str | None) -> Account:
    """The account of a data file held in memory (the dashboard's upload, an exported
    notebook's file): its records' fingerprint, and its bytes' SHA-256."""
    import hashlib

    from dprelease.data.fingerprint import fingerprint_table
    from dprelease.data.read import read_data

    records = fingerprint_table(read_data(data, filename=filename))
    return account_of(ledger, records, dataset, hashlib.sha256(data).hexdigest())


def released_tables(files: dict[str, bytes]) -> dict[str, Any]:
    """Each released table's CSV (values and their margin of error, `moe`) as a pandas
    DataFrame of text, by table name: what an exported notebook shows."""
    import io

    import pandas as pd

    return {
        path.removeprefix("tables/").removesuffix(".csv"): pd.read_csv(
            io.BytesIO(content), dtype=str, keep_default_na=False
        )
        for path, content in files.items()
        if path.startswith("tables/")
    }
