"""What the core subcommands print: an allocation's summary, the data holder's report (stderr),
the ledger's balance (stderr)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from dprelease.budget_text import budget_text, optional_budget_text

if TYPE_CHECKING:
    from dprelease.accounting.allocation import TableBudget
    from dprelease.data.count import EncodedData
    from dprelease.data.engines.result import CountResult
    from dprelease.plan.model import Plan
    from dprelease.release.publish import Account
    from dprelease.stats.allocation import PlanAllocation


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


def summary_text(allocation: PlanAllocation) -> str:
    """The allocation as `plan` and `release` print it: the totals, a row per table."""
    total = allocation.total
    head = (
        f"accounting: {allocation.accounting}   allocation: {allocation.allocation}   "
        f"strategy: {allocation.strategy}   confidence: {allocation.confidence:g}\n"
        f"total: epsilon={_budget(total.epsilon)} delta={_budget(total.delta)} "
        f"rho={_budget(total.rho)}"
        f" ({allocation.accountant.composition_text(total.composition)})\n"
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
        from dprelease.stats.entry import statistics_text

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


def data_report_lines(encoded: EncodedData | CountResult, plan: Plan) -> tuple[str, ...]:
    """For the data holder: rows left out or clamped, weights missing or clamped, advice on δ
    from the row count (never written to a release)."""
    from dprelease.accounting.allocation import delta_advice

    return (*encoded.report.lines(), *delta_advice(plan.budget.delta, encoded.rows))


def print_data_report(encoded: EncodedData | CountResult, plan: Plan) -> None:
    """For the data holder, on stderr: `data_report_lines` (never written to a release)."""
    for line in data_report_lines(encoded, plan):
        sys.stderr.write(f"data (for you only, never in the release): {line}\n")


def print_balance(account: Account, epsilon: float | None) -> None:
    """The ledger's balance after a release, on stderr."""
    ledger = account.ledger
    balance = account.balance()
    cap = (
        "no lifetime cap (set one with --cap)"
        if balance.cap_epsilon is None
        else f"lifetime cap {budget_text(balance.cap_epsilon, 'down')}, "
        f"ε = {budget_text(balance.left_epsilon or 0.0, 'down')} left under the composed total"
    )
    total = balance.composed
    # What is left is rounded down, never up: a rounded "left" must not overstate.
    sys.stderr.write(
        f"ledger: this release spent ε = {optional_budget_text(epsilon, 'up', '-')}; this data "
        f"set has spent ε = {budget_text(balance.spent_epsilon, 'up')} over "
        f"{balance.releases} release(s) (summed), composed ε = "
        f"{budget_text(total.epsilon, 'up')}, δ = {budget_text(total.delta, 'up')} "
        f"({total.rule}); {cap} ({ledger.path})\n"
    )
