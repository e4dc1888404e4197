"""`release` and `validate` of a plan with statistics or discovered domains (issue 16).

The statistics' columns are read into memory (`dprelease.stats.source`); the count tables are
counted by the chosen engine, after the domains are discovered when the plan has any (inside
the ledger's charge, like the noise). With a ledger, the records' fingerprint comes from a
pass of its own when the counting cannot make it first.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from dprelease.data.count import EncodedData, TrueCounts

if TYPE_CHECKING:
    from dprelease.accounting.allocation import Allocation
    from dprelease.data.engines import CountResult
    from dprelease.data.fingerprint import RecordFingerprint
    from dprelease.plan.model import Plan
    from dprelease.release.draw import Release
    from dprelease.release.publish import Account
    from dprelease.stats.source import StatSource


def _fingerprint(args: argparse.Namespace, source: Path | str) -> RecordFingerprint:
    """The fingerprint of the records (the ledger's key), from a pass of its own over every
    column of any source the engines read (`dprelease.data.engines.scan_records`)."""
    from dprelease.data.engines import locate, scan_records
    from dprelease.data.fingerprint import FingerprintAccumulator
    from dprelease.data.read import SizeLimits

    limits = SizeLimits(args.max_data_mb * 1_000_000, args.max_rows)
    accumulator = FingerprintAccumulator()
    scan_records(locate(source, limits), limits, accumulator, args.spark_master)
    return accumulator.fingerprint


def with_statistics(
    counted: CountResult | None, statistics: StatSource, plan: Plan
) -> EncodedData | CountResult:
    """The counting's data report (if the plan has count tables) joined with what the
    statistics' own reading found: their rows with no number and values outside their bounds
    (CONFIDENTIAL: for the data holder's report on stderr only)."""
    report = statistics.report(plan)
    if counted is None:
        return EncodedData(MappingProxyType({}), report)
    return dataclasses.replace(counted, report=counted.report.joined(report))


def release_with_statistics(
    args: argparse.Namespace,
    source: Path | str,
    plan: Plan,
    allocation: Allocation,
    out: Path,
) -> tuple[Release, EncodedData | CountResult, Account | None]:
    """Draw and write the release; returns it, the counting result with the statistics'
    figures (for the data report) and the ledger account (None with --no-ledger)."""
    from dprelease.commands import _charged_release, _count, _ledger_account, _uncharged_release
    from dprelease.data.read import SizeLimits
    from dprelease.stats.source import read_stat_source

    limits = SizeLimits(args.max_data_mb * 1_000_000, args.max_rows)
    statistics = read_stat_source(source, plan, limits)
    counted: list[CountResult] = []

    def counter(completed: Plan) -> TrueCounts:
        if not completed.tables:
            return TrueCounts(MappingProxyType({}))  # no rows read: the statistics' are checked
        counted.append(_count(args, source, completed))
        return counted[-1].counts

    if args.no_ledger:
        release = _uncharged_release(plan, counter, allocation, out, statistics)
        return release, with_statistics(counted[0] if counted else None, statistics, plan), None
    account = _ledger_account(args, source, plan, allocation, _fingerprint(args, source))
    release = _charged_release(args, account, plan, counter, allocation, out, statistics)
    return release, with_statistics(counted[0] if counted else None, statistics, plan), account


def validate_statistics_data(args: argparse.Namespace, source: Path | str, plan: Plan) -> None:
    """Check that the data have the statistics' columns; count the tables that need no
    discovered domain; print the data report (the statistics' figures too)."""

    from dprelease.commands import _count, _print_data_report
    from dprelease.data.read import SizeLimits
    from dprelease.stats.source import read_stat_source

    limits = SizeLimits(args.max_data_mb * 1_000_000, args.max_rows)
    statistics = read_stat_source(source, plan, limits)
    discovered = {d.column for d in plan.discoveries}
    tables = tuple(t for t in plan.tables if not discovered & set(t.by))
    counted = None
    if tables:
        counted = _count(args, source, dataclasses.replace(plan, tables=tables, discoveries=()))
    _print_data_report(with_statistics(counted, statistics, plan), plan)
    if discovered and not tables:
        sys.stderr.write("note: tables over discovered columns are counted at release.\n")
