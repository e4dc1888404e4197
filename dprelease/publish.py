"""One release, charged to the ledger: read → count → fresh secure noise → package.

Everything from reading the data to the finished zip happens inside `Ledger.charge`, so noise
is never drawn without its charge being recorded, a failure anywhere charges nothing, and the
caller gets the zip only after the charge has committed.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

from dprelease.allocation import Allocation
from dprelease.data import count, load_data
from dprelease.export import release_zip
from dprelease.ledger import Ledger, LedgerEntry
from dprelease.plan import Plan
from dprelease.release import Release, draw_release

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Published:
    entry: LedgerEntry
    release: Release
    zip_bytes: bytes

    @property
    def report_html(self) -> str:
        """The report as packaged in the zip (not rendered a second time)."""
        with zipfile.ZipFile(io.BytesIO(self.zip_bytes)) as archive:
            return archive.read("report.html").decode("utf-8")


def _quiet(fraction: float, message: str) -> None:
    del fraction, message


def publish(
    data: bytes,
    filename: str,
    plan: Plan,
    allocation: Allocation,
    *,
    ledger: Ledger,
    dataset: str,
    release_id: str,
    label: str,
    progress: Progress = _quiet,
) -> Published:
    """Make the release and charge it once; raises AlreadyChargedError for a used id,
    BudgetError if it does not fit the lifetime cap, DataError for unreadable data."""
    tables = [t.name for t in allocation.tables]
    with ledger.charge(dataset, release_id, allocation.total, label=label, tables=tables) as entry:
        progress(0.1, "Reading and encoding the data…")
        encoded = load_data(data, plan, filename=filename)
        progress(0.4, "Counting every table…")
        true_counts = count(encoded, plan)
        progress(0.55, "Drawing fresh noise with OpenDP's secure samplers…")
        release = draw_release(plan, true_counts, allocation)
        progress(0.85, "Writing tables, metadata and report…")
        zip_bytes = release_zip(release)
    progress(1.0, "Done: charged to the ledger once.")
    return Published(entry, release, zip_bytes)
