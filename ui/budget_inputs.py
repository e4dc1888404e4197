"""The Budget page's inputs: total ε (log slider and exact box), δ, ρ, accounting, split,
confidence. Each change is written into the plan at once; a bad value is refused with a
one-line error and the plan keeps its last good value."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dprelease.accounting.accountants.registry import labels, takes_delta, takes_rho
from dprelease.errors import PlanError
from dprelease.plan.edit import set_budget
from dprelease.plan.model import ALLOCATION_LABELS, STRATEGY_LABELS, Budget, default_of
from dprelease.plan.table_spec import check_delta, check_epsilon, check_rho
from ui.markdown import md
from ui.state import Workspace
from ui.synced import synced

_SLIDER = tuple(float(f"{v:.2g}") for v in np.geomspace(0.01, 20, 34))


def _slider_options(value: float) -> list[float]:
    return sorted({*_SLIDER, value})


def _set(ws: Workspace, **changes: object) -> None:
    ws.plan = set_budget(ws.plan, **changes)
    ws.memo.budget_error = None


def _refuse(ws: Workspace, message: str) -> None:
    ws.memo.budget_error = message


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def accounting_changes(budget: dict[str, object], chosen: str) -> dict[str, object]:
    """The budget's changes when the accountant becomes `chosen` (also what `ui.warm_up`
    computes ahead for approx)."""
    changes: dict[str, object] = {"accounting": chosen}
    if not takes_rho(chosen) and budget.get("rho") is not None:  # ρ is zCDP's: carry on in ε
        changes.update(rho=None, epsilon=budget.get("epsilon") or 1.0)
    if takes_delta(chosen) and budget.get("delta") is None:
        changes["delta"] = 1e-10
    return changes


def budget_inputs(ws: Workspace) -> None:
    budget = ws.plan.get("budget", {})
    accounting = budget.get("accounting", default_of(Budget, "accounting"))
    epsilon = budget.get("epsilon")
    rho = budget.get("rho")

    def on_accounting() -> None:
        _set(ws, **accounting_changes(budget, st.session_state["accounting"]))

    top = st.columns(4)
    top[0].selectbox(
        "Accounting",
        list(labels()),
        index=list(labels()).index(accounting),
        format_func=labels().__getitem__,
        key="accounting",
        on_change=on_accounting,
        help="How the tables' costs add up to the total guarantee.",
    )
    top[1].selectbox(
        "Allocation",
        list(ALLOCATION_LABELS),
        index=list(ALLOCATION_LABELS).index(
            budget.get("allocation", default_of(Budget, "allocation"))
        ),
        format_func=ALLOCATION_LABELS.__getitem__,
        key="allocation",
        on_change=lambda: _set(ws, allocation=st.session_state["allocation"]),
    )
    top[3].selectbox(
        "Strategy",
        list(STRATEGY_LABELS),
        index=list(STRATEGY_LABELS).index(budget.get("strategy", default_of(Budget, "strategy"))),
        format_func=STRATEGY_LABELS.__getitem__,
        key="strategy",
        on_change=lambda: _set(ws, strategy=st.session_state["strategy"]),
        help="auto may measure finer or coarser tables than it publishes and derive the "
        "published tables from them by least squares.",
    )
    top[2].slider(
        "Confidence of the margins of error",
        0.5,
        0.99,
        value=float(budget.get("confidence", default_of(Budget, "confidence"))),
        step=0.01,
        key="confidence",
        on_change=lambda: _set(ws, confidence=st.session_state["confidence"]),
    )

    use_rho = takes_rho(accounting) and st.toggle(  # ρ under auto means zcdp
        "Give the zCDP budget as ρ instead of ε",
        value=rho is not None,
        key="use_rho",
        on_change=lambda: _set(
            ws,
            **(
                {"rho": None, "epsilon": 1.0} if rho is not None else {"rho": 0.01, "epsilon": None}
            ),
        ),
    )
    row = st.columns([3, 1, 1])
    if use_rho:
        _rho_box(ws, row[1], rho)
    else:
        _epsilon_inputs(ws, row[0], row[1], float(epsilon or 1.0))
    if takes_delta(accounting):
        _delta_box(ws, row[2], budget.get("delta", 1e-10))
    if ws.memo.budget_error:
        st.error(md(ws.memo.budget_error))


def _checked_box(
    ws: Workspace, field: str, check: Callable[[float, str], None], what: str, **also: object
) -> None:
    """Keep the number typed in box `{field}_box` as the budget's `field` (with the changes
    `also`) if the plan's own `check` takes it; else say why in the plan's one line and keep the
    last good value."""
    value = _number(st.session_state[f"{field}_box"])
    try:
        check(math.nan if value is None else value, what)
    except PlanError as error:
        _refuse(ws, f"{error} It is unchanged.")
    else:
        _set(ws, **{field: value}, **also)


def _rho_box(ws: Workspace, box: DeltaGenerator, rho: float) -> None:
    synced("rho_box", f"{rho:g}")
    box.text_input(
        "ρ (exact)",
        key="rho_box",
        on_change=lambda: _checked_box(ws, "rho", check_rho, "ρ", epsilon=None),
    )


def _epsilon_inputs(
    ws: Workspace, slider: DeltaGenerator, box: DeltaGenerator, current: float
) -> None:
    """The total ε: a log slider and an exact box, kept in step."""
    synced("epsilon_slider", current)
    synced("epsilon_box", f"{current:g}")
    slider.select_slider(
        "Total ε (log scale)",
        options=_slider_options(current),
        key="epsilon_slider",
        on_change=lambda: _set(ws, epsilon=st.session_state["epsilon_slider"]),
        format_func=lambda v: f"{v:g}",
    )
    box.text_input(
        "ε (exact)",
        key="epsilon_box",
        on_change=lambda: _checked_box(ws, "epsilon", check_epsilon, "ε"),
    )


def _delta_box(ws: Workspace, box: DeltaGenerator, delta: float) -> None:
    synced("delta_box", f"{delta:.3g}")  # 1.11e-09, not 0.000000001
    box.text_input(
        "δ",
        key="delta_box",
        on_change=lambda: _checked_box(ws, "delta", check_delta, "δ"),
        help="The chance the guarantee fails outright; keep it far below 1 / rows.",
    )
