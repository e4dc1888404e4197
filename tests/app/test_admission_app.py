"""Issue 35: the pages that do work ask the one admission first. With a stage's estimator over
every limit, the Preview, Risk and Local DP pages show the one-line refusal with st.error,
start none of the work, and keep the user's plan and data."""

from __future__ import annotations

import pytest

from dprelease import admission
from dprelease.admission import DataSize, Estimate
from helpers.app import go, open_app, workspace

EDGES = b"from,to\nAlice,Bob\nAlice,Cathy\nCathy,Bob\nCathy,Dave\nDave,Fred\n"


def _refuse(monkeypatch: pytest.MonkeyPatch, stage: str, *work: str) -> list[str]:
    """Swap `stage`'s estimator for one over every limit; make each of `work` fail the test."""
    asked: list[str] = []

    def over_limit(task: object, data: DataSize) -> Estimate:
        asked.append(stage)
        return Estimate(stage, 10**13, 0, "TEST_LIMIT")

    def never(*args: object, **kwargs: object) -> None:
        pytest.fail("the work started before admission refused")

    monkeypatch.setitem(admission.STAGES, stage, over_limit)
    for target in work:
        monkeypatch.setattr(target, never)
    return asked


def _refused(app) -> bool:  # type: ignore[no-untyped-def]
    return any("TEST_LIMIT" in str(e.value).replace("\\", "") for e in app.error)


def test_the_preview_is_admitted_before_counting_or_drawing(monkeypatch) -> None:
    app = go(open_app(), "pages/preview.py")  # the sample data and its plan
    plan = dict(workspace(app).plan)
    asked = _refuse(
        monkeypatch,
        "preview",
        "dprelease.release.statistics.upload_inputs",
        "dprelease.release.draw.draw_preview",
    )
    app.button(key="draw_preview").click().run()
    assert not app.exception, app.exception
    assert asked == ["preview"] and _refused(app)
    assert any("Your plan and data are unchanged" in str(e.value) for e in app.error)
    assert workspace(app).preview is None and workspace(app).plan == plan


def test_the_graph_risk_is_admitted_before_the_edge_search(monkeypatch) -> None:
    app = open_app()
    go(app, "pages/risk.py")
    asked = _refuse(monkeypatch, "graph", "ui.graph_view.measure_degree_risk")
    app.file_uploader(key="graph_upload").upload("mail.csv", EDGES, "text/csv")
    app.run()
    assert not app.exception, app.exception
    assert "graph" in asked and _refused(app)


def test_local_dp_heavy_hitters_are_admitted_before_the_column_is_read(monkeypatch) -> None:
    app = open_app()
    go(app, "pages/local_dp.py")
    asked = _refuse(monkeypatch, "ldp", "ui.ldp_heavy.heavy_hitters", "ui.ldp_heavy.text_codes")
    app.button(key="ldp_hh_run").click().run()
    assert not app.exception, app.exception
    assert asked == ["ldp"] and _refused(app)
    assert "ldp_heavy_hitters" not in app.session_state


def test_the_budget_pages_allocation_is_admitted_before_it_runs(monkeypatch) -> None:
    # The dashboard's own allocation (every page's check, the what-if) asks the same admission
    # as `plan`: over a limit, the page says so in one line and keeps the plan.
    app = go(open_app(), "pages/budget.py")
    asked = _refuse(monkeypatch, "strategy", "ui.state.allocate")
    app.text_input(key="epsilon_box").set_value("2").run()
    assert not app.exception, app.exception
    assert "strategy" in asked
    assert any("TEST_LIMIT" in str(e.value).replace("\\", "") for e in [*app.error, *app.warning])
    assert workspace(app).plan["budget"]["epsilon"] == 2.0  # the plan kept what was typed
