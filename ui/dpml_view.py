"""Regression and PCA in the dashboard (issue 28.4): the Tables page's form, and their tables
on the Preview page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.plan.model_edit import MODEL_KINDS, add_model, model_stat
from dprelease.release.draw import Preview
from dprelease.release.statistics import ReleasedStatistic
from dprelease.stats.logistic import regularization_note
from ui.markdown import md, md_error, static_table


def render_model_form(plan: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> None:
    """'Add a regression or PCA': the new statistic is checked by the plan's parser."""
    with st.form("add_model_form", clear_on_submit=True):
        st.markdown(
            "**Add a regression or PCA** (one coefficient or component table over all rows)"
        )
        kind_col, y_col, x_col = st.columns([1, 1, 2])
        kind = kind_col.selectbox("Model", MODEL_KINDS, key="new_model_kind")
        y = y_col.text_input("y column (regression)", key="new_model_y")
        x = x_col.text_input("x columns, comma-separated (regression)", key="new_model_x")
        pca_col, k_col = st.columns([3, 1])
        pca_columns = pca_col.text_input("Columns, comma-separated (PCA)", key="new_model_pca")
        k = int(k_col.number_input("k (PCA)", min_value=1, value=1, step=1, key="new_model_k"))
        bounds = st.text_area(
            "Bounds, one column per line (e.g. age: 16, 95); a logistic y defaults to 0, 1",
            key="new_model_bounds",
        )
        st.caption(
            "Every value is clamped into its bounds, which also fix the noise: a row with a "
            "missing value in any of the columns is left out. A logistic regression's y is "
            "rounded to the nearer bound (the upper bound is the positive class)."
        )
        if st.form_submit_button("Add model"):
            try:
                change(add_model(plan, model_stat(kind, y, x, pca_columns, k, bounds)))
            except DPReleaseError as error:
                st.error(md_error(error, "The plan is unchanged."))


def show_own_table(released: ReleasedStatistic, preview: Preview) -> bool:
    """A statistic released as its own table (a regression's coefficients, a PCA's
    components), with the data holder's simulated errors; False for any other statistic."""
    budget = released.budget
    confidence = preview.allocation.confidence
    own = budget.kind.table(budget.mechanism, released.values, confidence)
    if own is None:
        return False
    header, rows = own
    st.markdown(f"**{md(budget.name)}**: PREVIEW noise (numpy), not a release")
    static_table([dict(zip(header, row, strict=True)) for row in rows])
    note = regularization_note(budget.mechanism, released.values)  # logistic only: Λ's bias
    if note:
        st.caption(note)
    errors = preview.statistic_errors.get(budget.name) or []
    if errors:
        static_table([{"error": name, "value": value} for name, value in errors[0].items()])
    st.caption(
        f"moe: the half-width at {confidence:.0%} by a parametric bootstrap on the noisy "
        "moments (it is published with the release; a logistic regression has none). The "
        "errors below the table are against the fit without noise on the same clamped rows, "
        "by simulation: read from your data, confidential like this page. Clamping and the "
        "regression's own sampling error are not included."
    )
    return True
