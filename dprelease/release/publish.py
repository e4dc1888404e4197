"""One release, charged to the ledger once: the one flow for the CLI and the dashboard.

Order (issue 11): inside `Ledger.charge` the true counts are made, the noise is drawn from the
secure samplers and every release file is built *in memory*; the charge commits; only then does
anything reach the disk (`write_files`) or the user (the dashboard's zip). So no release file
can be read before its charge is committed: a failure or a kill before the commit charges
nothing and leaves nothing, and a crash after it leaves the release charged but not delivered,
the safe direction. What a killed writer leaves in its staging folder is 0700 and removed by the
next run (`dprelease.release.export.clean_stale_staging`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from dprelease.accounting.allocated import Allocation
from dprelease.accounting.composition import Guarantee
from dprelease.data.count import TrueCounts
from dprelease.data.fingerprint import RecordFingerprint
from dprelease.errors import DataError, InternalError, ReleaseError
from dprelease.ledger.sketches import identifying
from dprelease.ledger.store import Ledger, LedgerEntry
from dprelease.ledger.values import Account as ResolvedAccount
from dprelease.ledger.values import Balance
from dprelease.plan.model import Plan
from dprelease.release.draw import Release, draw_release
from dprelease.release.export import files_zip, release_files, write_files
from dprelease.release.statistics import Counter
from dprelease.stats.allocation import plan_allocation
from dprelease.stats.source import StatSource

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Account:
    """Where a release is charged: the ledger, the fingerprint of the records (its keys and
    sketch find the account), the plan's `dataset:` name and the file's SHA-256 (finds an
    account of a format-1 ledger). Every use of the ledger for these records goes through
    here, so that each one finds the account by the same keys."""

    ledger: Ledger
    fingerprint: RecordFingerprint
    name: str | None = None
    legacy: str | None = None

    @property
    def records(self) -> str:
        """The ledger key of the records."""
        return self.fingerprint.key()

    @property
    def aliases(self) -> tuple[str, ...]:
        """Other keys of the same records: of the columns the plan reads, and the format-3
        key (computed only while the ledger has accounts that need it)."""
        keys = (self.fingerprint.read_key(), self.fingerprint.legacy_key())
        return tuple(key for key in keys if key is not None and key != self.records)

    @property
    def sketch(self) -> tuple[int, ...]:
        """The rows' sketch, when it tells these records apart (`ledger.sketches`)."""
        sketch = self.fingerprint.sketch
        return tuple(sketch) if identifying(sketch, self.fingerprint.rows) else ()

    def resolve(self) -> ResolvedAccount:
        """The account as the ledger knows it (`notice` says when a name, an old key or a
        near-duplicate decided it); BudgetError when the name holds other records."""
        return self.ledger.account(
            self.records, self.name, self.legacy, aliases=self.aliases, sketch=self.sketch
        )

    def balance(self) -> Balance:
        return self.ledger.balance(self.resolve().key)

    def check(self, total: Guarantee) -> None:
        """Raise BudgetError unless `total` fits the account's lifetime caps now."""
        self.ledger.check(
            self.records,
            total,
            name=self.name,
            legacy=self.legacy,
            aliases=self.aliases,
            sketch=self.sketch,
        )

    def set_cap(self, epsilon: float | None, *, only_lower: bool = False) -> None:
        """Set (None: remove) the account's lifetime ε cap; `only_lower`: the dashboard's."""
        self.ledger.set_cap(
            self.records,
            epsilon,
            name=self.name,
            legacy=self.legacy,
            aliases=self.aliases,
            sketch=self.sketch,
            only_lower=only_lower,
        )

    def charge(
        self,
        release_id: str,
        guarantee: Guarantee,
        *,
        label: str,
        tables: Sequence[str],
        invariants: Sequence[str] = (),
        allow_invariants: bool = False,
    ) -> AbstractContextManager[LedgerEntry]:
        """`Ledger.charge` of these records: committed only if the block exits normally."""
        return self.ledger.charge(
            self.records,
            release_id,
            guarantee,
            label=label,
            tables=tables,
            name=self.name,
            legacy=self.legacy,
            aliases=self.aliases,
            sketch=self.sketch,
            invariants=invariants,
            allow_invariants=allow_invariants,
        )


def check_fingerprint(account: Account, rows_read: int | None) -> None:
    """Refuse a release whose records the ledger's fingerprint did not all see.

    A reader that fed the fingerprint nothing (issue 25: an .xlsx, a Spark URI) charged every
    such release to the account of an *empty* data set, past the real records' cap. The
    fingerprint must have seen at least one record and at least the `rows_read` counted.
    """
    seen = account.fingerprint.rows
    if seen > 0 and (rows_read is None or seen >= rows_read):
        return
    raise DataError(
        "The ledger's fingerprint of the data saw "
        + ("no records" if seen == 0 else "fewer records than the release counted")
        + ", so the release cannot be charged to the account of these records; nothing was "
        "charged (a bug in reading this data: please report it, with the file's format)."
    )


def _rows_read(counts: TrueCounts) -> int | None:
    if counts.counts and counts.rows_read is None:
        raise InternalError("true counts made without their rows read cannot be charged")
    return counts.rows_read


@dataclass(frozen=True)
class Published:
    entry: LedgerEntry
    release: Release
    files: dict[str, bytes] = field(repr=False)

    @property
    def zip_bytes(self) -> bytes:
        return files_zip(self.files)

    @property
    def report_html(self) -> str:
        """The report as packaged (not rendered a second time)."""
        return self.files["report.html"].decode("utf-8")


def _quiet(fraction: float, message: str) -> None:
    del fraction, message


def charged_release(
    plan: Plan,
    allocation: Allocation,
    true_counts: TrueCounts | Counter,
    account: Account,
    *,
    release_id: str,
    label: str,
    progress: Progress = _quiet,
    statistics_source: StatSource | None = None,
    allow_invariants: bool = False,
) -> Published:
    """Draw and build the release inside the ledger's charge; return after the commit.

    The true counts may be made before (the CLI's engines count in one pass with the ledger's
    fingerprint): counting spends nothing; the noise is drawn only inside the charge.

    Statistics and domain discoveries (issue 16) are drawn inside the same charge, from
    `statistics_source`; with discoveries, `true_counts` counts the plan once its domains are
    released (`dprelease.release.statistics.Counter`).

    Refused (DataError) when the account's fingerprint saw no records, or fewer than were
    counted or read for the statistics (`check_fingerprint`): before anything is drawn, or,
    with a Counter, as soon as it has counted, inside the charge (which then commits nothing).

    Raises AlreadyChargedError for a used id, BudgetError if it does not fit the caps or
    publishes invariant tables on a capped account without the owner's `allow_invariants`."""
    allocation = plan_allocation(plan, allocation)  # a count plan's `Allocation` as it is
    check_fingerprint(account, statistics_source.table.num_rows if statistics_source else None)
    counts: TrueCounts | Counter
    if isinstance(true_counts, TrueCounts):
        check_fingerprint(account, _rows_read(true_counts))
        counts = true_counts
    else:
        counter = true_counts

        def counts(completed: Plan) -> TrueCounts:
            counted = counter(completed)
            check_fingerprint(account, _rows_read(counted))
            return counted

    tables = [t.name for t in allocation.tables] + [s.name for s in allocation.statistics]
    with account.charge(
        release_id,
        allocation.total,
        label=label,
        tables=tables,
        invariants=[spec.name for spec in plan.invariants],  # issue 27: exact, uncharged
        allow_invariants=allow_invariants,  # issue 35: on a capped account, the owner's call
    ) as entry:
        progress(0.55, "Drawing fresh noise with OpenDP's secure samplers…")
        release = draw_release(plan, counts, allocation, statistics_source=statistics_source)
        progress(0.85, "Building tables, metadata and report (in memory)…")
        files = release_files(release, {"release_id": release_id, "dataset": account.name})
    progress(1.0, "Done: charged to the ledger once.")
    return Published(entry, release, files)


def deliver(published: Published, out: str | Path) -> Path:
    """Write a charged release to `out`; a failure now leaves it charged, not delivered."""
    try:
        return write_files(published.files, out)
    except ReleaseError as error:
        raise ReleaseError(
            f"The release was charged to the ledger (id {published.entry.release_id}) but not "
            f"delivered: {error}"
        ) from None
