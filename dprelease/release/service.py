"""The one release flow of the CLI and the dashboard: `release_plan(ReleaseRequest)`.

Issues 24/26: both front ends used to assemble the flow each in its own way (the ledger, the
account, the checks, the defaults) and had drifted apart. Now both describe a release as a
`ReleaseRequest` and call `release_plan`, which does, in this order:

1. read the data (`FileData`: a file, folder or URI through the engines, the CLI's;
   `UploadData`: bytes in memory, the dashboard's) and count the tables (with statistics or
   discovered domains, the counting waits for the completed plan, inside the charge);
2. open the ledger (`$DPRELEASE_LEDGER`, else ~/.dprelease/ledger.sqlite, unless a path is
   given) and find the account: the records' fingerprint, the plan's `dataset:` name, the
   file's SHA-256 (which finds an account of a format-1 ledger); set a cap if asked; check
   that the release fits the caps;
3. charge, draw and post-process (`dprelease.release.publish.charged_release`, the one charged
   flow), or, uncharged (the CLI's `--no-ledger`, said out loud), draw with `"ledger": null`
   in the metadata;
4. export: the files in memory (`ReleaseOutcome.files`, the dashboard's zip), written to
   `ReleaseRequest.out` only after the charge committed (the CLI's folder or zip).

The defaults live here and in the plan (`dprelease.plan.model`: `consistent` is on unless the
plan switches it off): a request charges the default ledger unless `charge=False`.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dprelease.accounting.allocated import Allocation
from dprelease.accounting.composition import Guarantee
from dprelease.data.count import EncodedData, TrueCounts
from dprelease.data.coverage import LeftOut, check_left_out, left_out_items
from dprelease.data.engines.result import CountResult
from dprelease.data.fingerprint import Fingerprinting, RecordFingerprint
from dprelease.errors import BudgetError
from dprelease.ledger.files import default_ledger_path
from dprelease.ledger.store import Ledger, LedgerEntry
from dprelease.ledger.values import Account as ResolvedAccount
from dprelease.plan.model import Plan
from dprelease.release.admitted import admit_release
from dprelease.release.draw import Release, draw_release
from dprelease.release.export import files_zip, release_files, write_files
from dprelease.release.publish import Account, Progress, charged_release, deliver
from dprelease.release.sources import FileData, ReleaseData, UploadData
from dprelease.release.statistics import Counter
from dprelease.stats.allocation import PlanAllocation, plan_allocation
from dprelease.stats.source import StatSource, needed_columns

# re-exported: code written by `dprelease export` imports the data classes from here
__all__ = ["FileData", "ReleaseOutcome", "ReleaseRequest", "UploadData", "release_plan"]

NO_LEDGER_WARNING = (
    "warning: --no-ledger: this release is charged to no ledger, so no lifetime cap limits it "
    'and nothing records what it spent; its metadata.json says "ledger": null.'
)


def open_ledger(path: str | Path | None = None) -> Ledger:
    """The ledger at `path` (a file, or a ``postgresql://`` URL), else $DPRELEASE_LEDGER, else
    ~/.dprelease/ledger.sqlite."""
    return Ledger(path or default_ledger_path())


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
    return account.resolve()


def check_fits(account: Account, total: Guarantee) -> None:
    """Raise BudgetError unless `total` fits the account's lifetime caps (ε, and δ)."""
    account.check(total)


def set_cap(account: Account, epsilon: float | None) -> None:
    """Set (None: remove) the account's lifetime ε cap."""
    account.set_cap(epsilon)


def fingerprinting(ledger: Ledger, plan: Plan | None) -> Fingerprinting:
    """What the fingerprint of a release of `plan` covers for this ledger: the plan's columns,
    and the format-3 key while the ledger has accounts that need it."""
    from dprelease.data.count import _needed

    read = None if plan is None else tuple(dict.fromkeys([*_needed(plan), *needed_columns(plan)]))
    return Fingerprinting(read, ledger.needs_old_keys())


def ledger_account(
    ledger: Ledger,
    data: ReleaseData,
    dataset: str | None,
    counted: CountResult | None = None,
    plan: Plan | None = None,
) -> Account:
    """The account a release of `data` is charged to: the records' fingerprint (from `counted`'s
    pass if it made one, else a pass for `plan`), the plan's `dataset:` name and the file's
    SHA-256. The one rule of both front ends (the dashboard shows this account before it
    releases)."""
    settings = fingerprinting(ledger, plan)
    fingerprint = data.fingerprint(counted, settings)
    # the file's SHA-256 finds a format-1 account: read the bytes again only while one may wait
    return account_of(ledger, fingerprint, dataset, data.legacy_key() if settings.legacy else None)


def data_account(ledger: Ledger, data: bytes, filename: str, dataset: str | None) -> Account:
    """The account of a data file held in memory (an exported notebook's file)."""
    upload = UploadData(data, filename)
    return account_of(ledger, upload.fingerprint(), dataset, upload.legacy_key())


# --- the request and its outcome --------------------------------------------------------------


def _quiet(fraction: float, message: str) -> None:
    del fraction, message


@dataclass(frozen=True)
class ReleaseRequest:
    """One release, as both front ends describe it. The defaults are the house's: charged to
    the default ledger, a fresh release id, the plan's own allocation."""

    plan: Plan
    data: ReleaseData
    charge: bool = True  # False: the CLI's --no-ledger (metadata "ledger": null)
    ledger: str | Path | None = None  # None: $DPRELEASE_LEDGER, else ~/.dprelease/ledger.sqlite
    cap: float | None = None  # set this lifetime ε cap on the account first (the CLI's --cap)
    allocation: Allocation | Callable[[], Allocation] | None = None  # None: allocate(plan)
    release_id: str = field(default_factory=lambda: secrets.token_hex(16))
    label: str = ""  # what the ledger entry names ("": the data's name); the accountant follows
    out: str | Path | None = None  # written here once charged (a new folder, or a .zip)
    progress: Progress = _quiet
    # Issue 37: a table or statistic that leaves out more than 1% of the rows is refused
    # before any charge unless confirmed (the CLI's --allow-left-out; the dashboard confirms
    # on its own page, by the same rule, and passes True).
    allow_left_out: bool = False
    # Issue 35: invariant tables on an account with an ε cap, allowed by the ledger's owner
    # (the CLI's --allow-invariants; the dashboard never allows them).
    allow_invariants: bool = False

    def __post_init__(self) -> None:
        if self.cap is not None and not self.charge:
            raise BudgetError(
                "--cap sets a lifetime cap in a ledger; it cannot go with --no-ledger."
            )


@dataclass(frozen=True)
class ReleaseOutcome:
    """A finished release: what was drawn, its files (in memory), where they were written, and
    for the data holder only the data report (CONFIDENTIAL, never exported)."""

    release: Release
    files: dict[str, bytes] = field(repr=False)
    allocation: PlanAllocation
    entry: LedgerEntry | None  # None: uncharged
    account: Account | None
    notice: str | None = None  # how the ledger decided the account, when it is worth saying
    report: EncodedData | CountResult | None = field(default=None, repr=False)
    written: Path | None = None
    # CONFIDENTIAL: what was released although it leaves out more than 1% (allow_left_out)
    left_out: tuple[LeftOut, ...] = field(default=(), repr=False)

    @property
    def zip_bytes(self) -> bytes:
        return files_zip(self.files)

    @property
    def report_html(self) -> str:
        return self.files["report.html"].decode("utf-8")


def release_plan(request: ReleaseRequest) -> ReleaseOutcome:
    """Read, account, charge, draw, post-process and export one release (the module's steps).

    Raises BudgetError when the release does not fit the account's caps (before any noise),
    AlreadyChargedError for a release id charged before, DataError for data that cannot be read.
    """
    plan, data, progress = request.plan, request.data, request.progress
    admit_release(plan, data)  # issue 35: before the ledger, any charge or any noise
    ledger = open_ledger(request.ledger) if request.charge else None
    settings = None if ledger is None else fingerprinting(ledger, plan)
    progress(0.1, "Reading and encoding the data…")
    counted: list[CountResult] = []
    statistics: StatSource | None = None
    counts: TrueCounts | Counter
    left_out: list[LeftOut] = []
    allowed = request.allow_left_out
    if plan.statistics or plan.discoveries or not plan.tables:  # issue 16
        allocation = _allocation(request)  # a budget problem before the data are read
        statistics = data.statistics(plan)
        items = left_out_items(plan, statistics.report(plan))  # before the charge
        left_out += check_left_out([i for i in items if i.kind == "statistic"], allowed=allowed)

        def counter(completed: Plan) -> TrueCounts:
            if not completed.tables:
                return TrueCounts(MappingProxyType({}))  # no rows: the statistics' are checked
            counted.append(data.count(completed))
            found = counted[-1]
            # Counted inside the charge (discovered domains first): a refusal commits nothing.
            discovered = frozenset(d.column for d in plan.discoveries)
            tables = left_out_items(completed, found.report, found.counts.counts, discovered)
            left_out.extend(
                check_left_out([i for i in tables if i.kind == "table"], allowed=allowed)
            )
            return found.counts

        counts = counter
    else:
        progress(0.4, "Counting every table…")
        # One pass counts the tables and, with a ledger, fingerprints every record for its key.
        counted.append(data.count(plan, fingerprint=settings))
        counts = counted[0].counts
        items = left_out_items(plan, counted[0].report, counts.counts)
        left_out += check_left_out(items, allowed=allowed)  # before the ledger is opened
        allocation = _allocation(request)
    entry = account = notice = None
    if ledger is not None:
        first = counted[0] if counted else None
        account = ledger_account(ledger, data, plan.dataset, first, plan)
        notice = resolve_account(account).notice
        if request.cap is not None:
            set_cap(account, request.cap)
        check_fits(account, allocation.total)
        published = charged_release(
            plan,
            allocation,
            counts,
            account,
            release_id=request.release_id,
            label=f"{request.label or data.name} ({allocation.accounting})",
            progress=progress,
            statistics_source=statistics,
            allow_invariants=request.allow_invariants,
        )
        release, files, entry = published.release, published.files, published.entry
        written = deliver(published, request.out) if request.out is not None else None
    else:
        release = draw_release(plan, counts, allocation, statistics_source=statistics)
        files = release_files(release, ledger=None)
        written = write_files(files, request.out) if request.out is not None else None
    first = counted[0] if counted else None
    report = first if statistics is None else with_statistics(first, statistics, plan)
    return ReleaseOutcome(
        release, files, allocation, entry, account, notice, report, written, tuple(left_out)
    )


def _allocation(request: ReleaseRequest) -> PlanAllocation:
    chosen = request.allocation
    given = chosen() if callable(chosen) else chosen
    return plan_allocation(request.plan, given)


def with_statistics(
    counted: CountResult | None, statistics: StatSource, plan: Plan
) -> EncodedData | CountResult:
    """The counting's data report (if the plan has count tables) joined with what the
    statistics' own reading found: their rows with no number and values outside their bounds
    (CONFIDENTIAL: for the data holder's report only)."""
    report = statistics.report(plan)
    if counted is None:
        return EncodedData(MappingProxyType({}), report)
    return dataclasses.replace(counted, report=counted.report.joined(report))


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
