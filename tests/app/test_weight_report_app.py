"""Issue 37: the Data page shows the data holder, per survey weight the plan uses, how many
rows of the upload have no weight and how many the clamp moves (confidential, never cached)."""

from __future__ import annotations

import csv

from dprelease.plan.weight_edit import set_survey_weight
from helpers.app import ROOT, go, open_app, workspace

BOUND = 50_000


def expected_line() -> str:
    """The line computed here from the bundled sample, independently of the library."""
    missing = below = above = rows = 0
    with (ROOT / "data" / "census_sample.csv").open() as handle:
        for row in csv.DictReader(handle):
            rows += 1
            try:
                income = float(row["income"])
            except ValueError:
                missing += 1
                continue
            below += income < 0
            above += income > BOUND
    return (
        f"survey weight 'income' (bounds [0, {BOUND:,}]): {missing:,} of {rows:,} rows missing "
        f"or not a number (weight 0), {below + above:,} clamped ({below:,} below 0, "
        f"{above:,} above {BOUND:,})"
    )


def shown(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(a.value).replace("\\", "") for a in [*app.warning, *app.success]]


def test_the_data_page_counts_missing_and_clamped_weights():
    app = go(open_app(), "pages/data.py")
    assert not any("survey weight" in text for text in shown(app))  # no weighted table yet
    ws = workspace(app)
    first = ws.plan["tables"][0]["name"]
    ws.plan = set_survey_weight(ws.plan, first, "income", BOUND)
    app.run()
    assert not app.exception, app.exception
    line = expected_line()
    assert line in shown(app), shown(app)
    assert "above 50,000" in line and " 0 clamped" not in line  # the sample has such incomes
    assert any("Survey weights" in str(h.value) for h in app.subheader)
