"""The runners of the core commands (plan, release, validate, sample), and what they print.

Each runner takes the parsed arguments and returns the exit status; `dprelease.cli` defines
the arguments and maps errors to exit codes. Each runner imports only what it needs, so that
start-up stays fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from dprelease.budget_text import budget_text, optional_budget_text
from dprelease.errors import DPReleaseError, InternalError, one_line

if TYPE_CHECKING:
    from dprelease.accounting.allocation import Allocation, TableBudget
    from dprelease.data.count import EncodedData, TrueCounts
    from dprelease.data.engines import CountResult
    from dprelease.data.fingerprint import RecordFingerprint
    from dprelease.plan.model import Plan
    from dprelease.release.background import Background
    from dprelease.release.draw import Release
    from dprelease.release.publish import Account
    from dprelease.release.statistics import Counter
    from dprelease.stats.source import StatSource


def _count(
    args: argparse.Namespace, source: Path | str, plan: Plan, *, fingerprint: bool = False
) -> CountResult:
    """The true counts and data report from the chosen engine; with `fingerprint`, the same
    pass also fingerprints every record for the ledger (no second read of the data)."""
    from dprelease.data.engines import count_data
    from dprelease.data.fingerprint import FingerprintAccumulator
    from dprelease.data.read import SizeLimits

    limits = SizeLimits(args.max_data_mb * 1_000_000, args.max_rows)
    return count_data(
        source,
        plan,
        engine=args.engine,
        spark_master=args.spark_master,
        limits=limits,
        new_accumulator=FingerprintAccumulator if fingerprint else None,
    )


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _budget(value: float | None) -> str:
    """ε, δ or ρ as people write it (budget_text), "-" where it does not apply."""
    return optional_budget_text(value, none="-")


def _columns_text(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows
    )


def _summary_text(allocation: Allocation) -> str:
    total = allocation.total
    head = (
        f"accounting: {allocation.accounting}   allocation: {allocation.allocation}   "
        f"strategy: {allocation.strategy}   confidence: {allocation.confidence:g}\n"
        f"total: epsilon={_budget(total.epsilon)} delta={_budget(total.delta)} "
        f"rho={_budget(total.rho)}"
        f" ({total.composition} composition)\n"
    )
    if allocation.required is not None:
        required = allocation.required
        head += (
            f"the targets need: epsilon={_budget(required.epsilon)} rho={_budget(required.rho)}\n"
        )
    budget_columns = ("cells", "mechanism", "epsilon", "delta", "rho", "std", "moe", "moe_table")
    rows: list[tuple[str, ...]] = [("table", *budget_columns, "expected_rmse", "measured")]
    for t in allocation.tables:
        rows.append(
            (
                t.name,
                *_budget_cells(t),
                _fmt(t.expected_rmse),
                "yes" if t.measured_as else "derived",
            )
        )
    text = head + _columns_text(rows) + "\n"
    if allocation.derived:
        measured: list[tuple[str, ...]] = [("measurement", *budget_columns)]
        measured += [(m.name, *_budget_cells(m)) for m in allocation.measurements]
        text += "measured (the tables above are least-squares estimates from these):\n"
        text += _columns_text(measured) + "\n"
    if allocation.statistics or allocation.discoveries:  # issue 16
        from dprelease.accounting.statistic_budget import statistics_text

        text += statistics_text(allocation)
    if allocation.accountant_choice is not None:
        text += f"accounting: auto chose {allocation.accountant_choice.summary()}\n"
    return text + "".join(f"note: {note}\n" for note in allocation.advice)


def _budget_cells(t: TableBudget) -> tuple[str, ...]:
    return (
        str(t.cells),
        t.noise.mechanism,
        _budget(t.epsilon),
        _budget(t.delta),
        _budget(t.rho),
        _fmt(t.noise.std),
        _fmt(t.moe),
        _fmt(t.moe_table),
    )


def _print_data_report(encoded: EncodedData | CountResult, plan: Plan) -> None:
    """For the data holder, on stderr: rows left out or clamped (never written to a release)."""
    from dprelease.accounting.allocation import delta_advice

    advice = delta_advice(plan.budget.delta, encoded.rows)
    for line in (*encoded.report.lines(), *advice):
        sys.stderr.write(f"data (for you only, never in the release): {line}\n")


def _load_plan(args: argparse.Namespace) -> Plan:
    from dprelease.plan.parse import load_plan

    plan = load_plan(args.plan, max_cells=args.max_cells)
    if plan.postprocess.synthetic:  # issue 27: the model's bound, before any data is read
        from dprelease.synthetic.junction import check_model

        check_model(plan)
    return plan


def _data_source(plan: Plan, data: str | None) -> Path | str:
    """The data to read: a file, a folder of part files, or a URI only Spark reads (kept as text:
    a Path would fold `hdfs:///x` into `hdfs:/x`)."""
    from dprelease.errors import DataError

    if data is not None and "://" in data:
        return data
    if data is None and plan.data is not None and "://" in plan.data:
        return plan.data
    path = Path(data) if data else plan.data_path
    if path is None:
        raise DataError("No data file: give --data FILE or set `data:` in the plan.")
    if path.is_dir():
        return path  # a folder of Parquet parts (Spark, Hive); the engines check it
    if not path.is_file():
        raise DataError(f"Data file '{path}' does not exist.")
    return path


def run_plan(args: argparse.Namespace) -> int:
    from dprelease.accounting.allocation import allocate

    allocation = allocate(_load_plan(args))
    if args.json:
        print(json.dumps(allocation.to_dict(), indent=2))
    else:
        print(_summary_text(allocation), end="")
    return 0


def run_release(args: argparse.Namespace) -> int:
    from dprelease.accounting.allocation import allocate
    from dprelease.release.background import Background, small_local_file
    from dprelease.release.export import check_output_path

    plan = _load_plan(args)
    # The allocation (a second under accounting and strategy auto) runs while a small file is
    # read; before anything larger is read, so that a budget problem is reported first.
    location = args.data or (plan.data if plan.data and "://" in plan.data else plan.data_path)
    allocating = Background(lambda: allocate(plan), overlap=small_local_file(location))
    try:
        out = check_output_path(args.out)  # before the data are read or any noise is drawn
        release, encoded, account, allocation = _release(args, plan, allocating, out)
    except Exception:
        allocating.result()  # a budget problem is the error to report, as it was read first
        raise
    if encoded is not None:
        _print_data_report(encoded, plan)  # after success, so that an error stays one line
    if account is not None:
        _print_balance(account, allocation.total.epsilon)
    if args.json:
        print(json.dumps(allocation.to_dict(), indent=2))
    else:
        print(_summary_text(allocation), end="")
        print(f"release written to {out}")
        print(f"post-processing: {', '.join(release.steps_applied) or 'none'}")
        for step in release.steps_skipped:
            print(f"note: post-processing step '{step}' cannot hold with consistency; skipped.")
    return 0


def _release(
    args: argparse.Namespace, plan: Plan, allocating: Background[Allocation], out: Path
) -> tuple[Release, EncodedData | CountResult | None, Account | None, Allocation]:
    """Count, draw and write the release of `run_release` (the allocation from `allocating`)."""
    from dprelease.release.noise import warm_up

    source = _data_source(plan, args.data)
    # OpenDP takes a while to import; let it load on the other core while the data are read.
    threading.Thread(target=warm_up, daemon=True).start()
    charged = not args.no_ledger  # issue 24: the ledger is charged unless told otherwise
    if not charged:
        if args.cap is not None:
            from dprelease.errors import BudgetError

            raise BudgetError(
                "--cap sets a lifetime cap in a ledger; it cannot go with --no-ledger."
            )
        from dprelease.release.service import NO_LEDGER_WARNING

        sys.stderr.write(NO_LEDGER_WARNING + "\n")
    if plan.statistics or plan.discoveries or not plan.tables:  # issue 16
        from dprelease.stats.command import release_with_statistics

        allocation = allocating.result()
        release, encoded, account = release_with_statistics(args, source, plan, allocation, out)
        return release, encoded, account, allocation
    # One pass counts the tables and, with a ledger, fingerprints every record for its key.
    encoded = _count(args, source, plan, fingerprint=charged)
    allocation = allocating.result()
    if not charged:
        return _uncharged_release(plan, encoded.counts, allocation, out), encoded, None, allocation
    account = _ledger_account(args, source, plan, allocation, _records_fingerprint(encoded))
    release = _charged_release(args, account, plan, encoded.counts, allocation, out)
    return release, encoded, account, allocation


def _uncharged_release(
    plan: Plan,
    counts: TrueCounts | Counter,
    allocation: Allocation,
    out: Path,
    statistics_source: StatSource | None = None,
) -> Release:
    """`--no-ledger`: drawn and written with `"ledger": null` in its metadata."""
    from dprelease.release.export import write_files
    from dprelease.release.service import uncharged_release

    release, files = uncharged_release(plan, allocation, counts, statistics_source)
    write_files(files, out)
    return release


def _records_fingerprint(counted: CountResult) -> RecordFingerprint:
    """The counting pass's fingerprint of the records (its key is the ledger's)."""
    from dprelease.data.fingerprint import FingerprintAccumulator

    if not isinstance(counted.accumulator, FingerprintAccumulator):
        raise InternalError("the counting pass made no fingerprint for the ledger")
    return counted.accumulator.fingerprint


def _ledger_account(
    args: argparse.Namespace,
    source: Path | str,
    plan: Plan,
    allocation: Allocation,
    fingerprint: RecordFingerprint,
) -> Account:
    """The ledger account of this data's records (their fingerprint's key, the plan's
    `dataset:` name), its cap set and checked (no lock yet)."""
    from dprelease.ledger.files import dataset_key_of_file
    from dprelease.release import service

    ledger = service.open_ledger(args.ledger)
    # A format-1 ledger keyed accounts by the file's bytes: a folder of parts never had one.
    legacy = dataset_key_of_file(source) if isinstance(source, Path) and source.is_file() else None
    account = service.account_of(ledger, fingerprint, plan.dataset, legacy)
    resolved = service.resolve_account(account)
    if resolved.notice:
        sys.stderr.write(f"ledger: note: {resolved.notice}\n")
    if args.cap is not None:
        service.set_cap(account, args.cap)
    service.check_fits(account, allocation.total)
    return account


def _charged_release(
    args: argparse.Namespace,
    account: Account,
    plan: Plan,
    counts: TrueCounts | Counter,
    allocation: Allocation,
    out: Path,
    statistics_source: StatSource | None = None,
) -> Release:
    """The one charged flow (`dprelease.release.publish`): drawn and built in memory inside the
    charge, written to `out` only after the charge has committed."""
    import secrets

    from dprelease.release.publish import charged_release, deliver

    published = charged_release(
        plan,
        allocation,
        counts,
        account,
        release_id=secrets.token_hex(16),  # one per run: a rerun is a new release, charged anew
        label=f"{Path(args.plan).name} ({allocation.accounting})",
        statistics_source=statistics_source,
    )
    deliver(published, out)
    return published.release


def _print_balance(account: Account, epsilon: float | None) -> None:
    ledger = account.ledger
    balance = ledger.balance(ledger.account(account.records, account.name, account.legacy).key)
    cap = (
        "no lifetime cap (set one with --cap)"
        if balance.cap_epsilon is None
        else f"lifetime cap {budget_text(balance.cap_epsilon, 'down')}, "
        f"ε = {budget_text(balance.left_epsilon or 0.0, 'down')} left"
    )
    # What is left is rounded down, never up: a rounded "left" must not overstate.
    sys.stderr.write(
        f"ledger: this release spent ε = {optional_budget_text(epsilon, 'up', '-')}; this data "
        f"set has spent ε = {budget_text(balance.spent_epsilon, 'up')} over "
        f"{balance.releases} release(s), {cap} ({ledger.path})\n"
    )


def run_validate(args: argparse.Namespace) -> int:
    from dprelease.accounting.allocation import allocate

    try:
        plan = _load_plan(args)
        allocation = allocate(plan)
    except DPReleaseError as error:
        for problem in error.problems:
            sys.stderr.write(f"error: {one_line(problem)}\n")
        return 2
    for note in allocation.advice:
        print(f"note: {note}")
    source = args.data or plan.data
    if source is not None and (plan.statistics or plan.discoveries or not plan.tables):
        from dprelease.stats.command import validate_statistics_data

        validate_statistics_data(args, _data_source(plan, args.data), plan)  # issue 16
    elif source is not None:
        _print_data_report(_count(args, _data_source(plan, args.data), plan), plan)
    statistics = f", {len(plan.statistics)} statistics" if plan.statistics else ""  # issue 16
    cells = sum(t.cells for t in allocation.tables)
    print(f"ok: {len(plan.tables)} tables, {cells} cells{statistics}")
    return 0


def _new_file(path: str, suffixes: tuple[str, ...], what: str) -> Path:
    """A file to create: right extension, folder exists, nothing there yet (never overwrite)."""
    from dprelease.errors import ReleaseError
    from dprelease.release.export import check_output_path

    if Path(path).suffix.lower() not in suffixes:
        raise ReleaseError(f"The {what} file '{path}' must end in {' or '.join(suffixes)}.")
    return check_output_path(path)


def run_sample(args: argparse.Namespace) -> int:
    from dprelease.sample.generator import write_sample, write_sample_plan

    out = _new_file(args.out, (".csv",), "sample")
    if args.plan:
        _new_file(args.plan, (".yaml", ".yml", ".json"), "plan")
    write_sample(out, args.rows, args.seed)
    print(f"wrote {args.rows} synthetic rows to {out}")
    if args.plan:
        write_sample_plan(Path(args.plan), data_file=os.path.relpath(out, Path(args.plan).parent))
        print(f"wrote a matching plan to {args.plan}")
    return 0
