"""The human-readable release report: one self-contained HTML page (no scripts, no links out).

Budget table, mechanism and accuracy per table, the post-processing steps, and a plain note on
what the guarantee means and what it does not cover. Every text is HTML-escaped.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from dprelease.accounting.epsilon_meaning import epsilon_risk_html
from dprelease.budget_text import budget_text, optional_budget_text
from dprelease.release.constraints_files import constraints_html
from dprelease.release.metadata import release_metadata, released_error
from dprelease.release.microdata_file import microdata_report
from dprelease.release.report_domains import domains_html

if TYPE_CHECKING:
    from dprelease.plan.table_spec import TableSpec
    from dprelease.release.draw import Release

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ccc; padding: .3rem .6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
.note { background: #f7f7ff; border-left: 4px solid #88a; padding: .5rem 1rem; }
"""


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}g}"


def _total_line(release: Release) -> str:
    total = release.allocation.total
    parts = []
    if total.epsilon is not None:
        parts.append(f"ε = {budget_text(total.epsilon)}")
    if total.delta is not None:
        parts.append(f"δ = {budget_text(total.delta)}")
    if total.rho is not None:
        parts.append(f"ρ = {budget_text(total.rho)}")
    return ", ".join(parts)


def _budget_rows(release: Release, measured: bool = False) -> str:
    rows = []
    allocation = release.allocation
    for table in allocation.measurements if measured else allocation.tables:
        rows.append(
            "<tr>"
            f"<td>{escape(table.name)}</td>"
            f"<td>{escape(' × '.join(table.spec.by) or '(total)')}{_weighted_mark(table.spec)}</td>"
            f"<td>{table.cells}</td>"
            f"<td>{escape(table.noise.kind.label)}</td>"
            f"<td>{optional_budget_text(table.epsilon)}</td>"
            f"<td>{optional_budget_text(table.delta)}</td>"
            f"<td>{optional_budget_text(table.rho)}</td>"
            f"<td>{_fmt(table.noise.scale)}</td><td>{_fmt(table.noise.std)}</td>"
            f"<td>{_fmt(table.moe)}</td><td>{_fmt(table.moe_table)}</td>"
            + ("" if measured else f"<td>{_fmt(_released_moe(release, table.name))}</td>")
            + "</tr>"
        )
    return "\n".join(rows)


def _weighted_mark(spec: TableSpec) -> str:
    """A weighted table's `by` cell says what its cells sum (issue 37.8)."""
    weight = spec.survey_weight
    if weight is None:
        return ""
    return f" (weighted total of {escape(weight.column)}, weights in [{weight.lo}, {weight.hi}])"


def _weighted_section(release: Release) -> str:
    names = [s.name for s in release.plan.tables if s.survey_weight is not None]
    if not names:
        return ""
    return f"""<h2>Weighted totals</h2>
<p>The tables {escape(", ".join(names))} hold survey-weighted totals, not counts: each cell is
the sum of its rows' weights from the column named beside the table, each weight clamped into
its bounds [lo, W] and rounded to a whole number (a missing weight counts 0). One person moves
a cell by at most W, so these tables' noise is W times a count table's at the same budget;
their margins of error are in weighted units. They are made consistent with the tables of the
same weight column only, never with the count tables.</p>"""


def _released_moe(release: Release, name: str) -> float:
    return float(released_error(release, release.table(name))["moe"])


def _measurements_section(release: Release) -> str:
    allocation = release.allocation
    if not allocation.derived:
        return ""
    return f"""<h2>What was measured</h2>
<p>To make the published tables as accurate as the budget allows, the release measured the
marginals below (strategy: auto) and derived every published table from them by least squares:
a table implied by a finer measurement (sex by age × sex) costs no budget of its own. The raw
measurements are in <code>measurements/</code>.</p>
<table><thead><tr><th>measurement</th><th>by</th><th>cells</th><th>mechanism</th><th>ε</th>
<th>δ</th><th>ρ</th><th>noise scale</th><th>noise std</th><th>MoE per cell</th>
<th>MoE whole table</th></tr></thead><tbody>
{_budget_rows(release, measured=True)}
</tbody></table>"""


def _accuracy_section(release: Release) -> str:
    if not release.accuracy:
        return ""
    rows = []
    for name, acc in release.accuracy.items():
        rows.append(
            f"<tr><td>{escape(name)}</td><td>{_fmt(acc.rmse_raw)}</td>"
            f"<td>{_fmt(acc.rmse_postprocessed)}</td><td>{_fmt(acc.bias_raw, 2)}</td>"
            f"<td>{_fmt(acc.bias_postprocessed, 2)}</td><td>{acc.simulations}</td></tr>"
        )
    return f"""<h2>Accuracy after post-processing</h2>
<p>The raw figures are exact (the estimates before post-processing are unbiased, with a known
variance). The post-processed ones are exact where post-processing is linear, otherwise
estimated by simulation from the released measurements only: fresh noise with each measurement's
known distribution is added to a consistent, non-negative estimate built from the measurements,
the same post-processing is run, and the errors per cell are averaged. RMSE is the typical
error of one cell; bias is the mean error (positive: counts too high on average).
Consistency lowers the error by pooling tables; non-negativity raises small cells a little.</p>
<table><thead><tr><th>table</th><th>RMSE raw</th><th>RMSE post-processed</th><th>bias raw</th>
<th>bias post-processed</th><th>simulations</th></tr></thead><tbody>
{chr(10).join(rows)}
</tbody></table>"""


def _statistics_section(release: Release, confidence: str) -> str:
    """Statistics and discovered domains (issue 16), from the release's own metadata."""
    if not release.statistics and not release.discovered:
        return ""
    from dprelease.release.statistics_files import statistics_report

    return statistics_report(release_metadata(release), confidence)


def _covered(release: Release) -> str:
    """What the guarantee covers: the whole release, or all but its invariant tables."""
    if not release.plan.invariants:
        return "the whole release"
    names = ", ".join(spec.name for spec in release.plan.invariants)
    return f"every table except the invariant ones ({escape(names)}: exact counts, see below)"


def report_html(release: Release) -> str:
    """The report page for a release."""
    allocation = release.allocation
    confidence = f"{allocation.confidence:.0%}"
    steps = ", ".join(release.steps_applied) or "none"
    skipped = (
        "<p>Requested but not applied: "
        f"{escape(', '.join(release.steps_skipped))}"
        " (its bounds cannot hold in every cell of consistent tables; the tables were released"
        " consistent and non-negative without it).</p>"
        if release.steps_skipped
        else ""
    )
    unit = release.plan.unit
    unit_text = (
        "one row (one person)"
        if unit.kind == "row"
        else f"all rows with the same {escape(unit.column or '')}, at most {unit.max_rows}"
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Differentially private release</title>
<style>{STYLE}</style></head><body>
<h1>Differentially private release</h1>
<p>Created {escape(release.created)} with dprelease. Noise drawn once with OpenDP's
cryptographically secure samplers.</p>
<h2>Privacy guarantee</h2>
<p><strong>{escape(_total_line(release))}</strong> for {_covered(release)}, under
{escape(allocation.accountant.description)}; allocation: {escape(allocation.allocation)}.
Privacy unit: {unit_text}; neighbouring data sets differ by
{"adding or removing" if release.plan.neighbors == "add_remove" else "replacing"} one unit.</p>
<div class="note">
<p><strong>What this means.</strong> Whatever anyone sees in these tables would have been almost
as likely had any one person's records been left out (or changed): the probability of any
outcome changes by a factor of at most e<sup>ε</sup>{" (plus δ)" if allocation.total.delta else ""}.
This holds against any attacker, whatever else they know, and it survives any further analysis
of the tables.</p>
{epsilon_risk_html(allocation.total.epsilon, allocation.total.delta)}
<p><strong>What it does not cover.</strong> It protects individuals, not groups: facts about
large groups (a county's population, a share of renters) are meant to be learnt. It covers only
these tables: other releases from the same data spend more budget and weaken the combined
guarantee. It assumes the domains and the plan were chosen without looking at the data, and it
says nothing about the quality of the data themselves.</p>
</div>
<h2>Tables, budget and accuracy</h2>
<p>Margins of error hold with {confidence} confidence: "per cell" for any one cell, "whole table"
for all cells of the table at once. "Noise std" and the first two margins describe each table's
estimate before post-processing (exact); "MoE released" is the per-cell margin of the published
counts, after post-processing (the <code>moe</code> column of each table's CSV).</p>
<table><thead><tr><th>table</th><th>by</th><th>cells</th><th>mechanism</th><th>ε</th><th>δ</th>
<th>ρ</th><th>noise scale</th><th>noise std</th><th>MoE per cell</th><th>MoE whole table</th>
<th>MoE released</th></tr></thead><tbody>
{_budget_rows(release)}
</tbody></table>
{_weighted_section(release)}
{_measurements_section(release)}
{constraints_html(release)}
<h2>Post-processing</h2>
<p>Steps applied, in order: {escape(steps)}. Post-processing reads only the noisy
measurements, so it costs no privacy; the raw measurements are in <code>measurements/</code>.</p>
{skipped}
{_accuracy_section(release)}
{microdata_report(release.microdata, allocation.synthesis)}
{_statistics_section(release, confidence)}
{domains_html(release.plan)}
</body></html>
"""
