"""The Local DP page's heavy-hitter and itemset sections: a CONFIDENTIAL simulation on the
data (every row randomised as its respondent would), with precision and recall against the
true top values and the respondents central DP would need for the same accuracy."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import streamlit as st

from dprelease.data.columns import dictionary_parts
from dprelease.errors import DPReleaseError
from dprelease.ldp.cost import LdpTask, admit_ldp
from dprelease.ldp.heavy_hitters import (
    central_respondents,
    heavy_hitters,
    precision_recall,
    text_codes,
    true_value_counts,
)
from dprelease.ldp.itemsets import SEPARATOR, frequent_itemsets, parse_answers, true_counts
from dprelease.plan.parse import parse_schema
from dprelease.plan.schema import with_label
from ui.markdown import md, md_error, static_table
from ui.state import Workspace, parsed_table, require_upload, upload_size

HEAVY_KEY = "ldp_heavy_hitters"
ITEMSETS_KEY = "ldp_itemsets"


CONFIDENTIAL = (
    "**CONFIDENTIAL — for your eyes only.** Every row of your data is randomised as its "
    "respondent would; the estimates are local-DP outputs, but precision and recall read the "
    "true values. Nothing here can be downloaded."
)


def _controls(ws: Workspace, prefix: str) -> tuple[str, int, int]:
    left, middle, right = st.columns(3)
    column = left.selectbox("Column", parsed_table(ws).column_names, key=f"{prefix}_column")
    top = middle.number_input("Top K", 1, 100, 10, key=f"{prefix}_top")
    length = right.number_input("Bytes read per value", 1, 64, 16, key=f"{prefix}_max_length")
    return str(column), int(top), int(length)


def _kept(ws: Workspace, key: str) -> Any:
    kept = st.session_state.get(key)
    if kept is None or ws.upload is None or kept[0] != ws.upload.sha256:
        return None
    return kept[1]


def _central(result: Any, sensitivity: int = 1) -> float:
    return central_respondents(
        result.n, result.moe_near_zero, result.epsilon, result.confidence, sensitivity
    )


def _hits_table(hits: list[tuple[str, float, float]], flags: tuple[bool, ...], k: int) -> None:
    if not hits:
        st.info("No value stands above the noise: try a larger ε or fewer bytes per value.")
        return
    static_table(
        [
            {
                "value": value,
                "estimate": f"{estimate:,.0f}",
                "margin of error": f"±{moe:,.0f}",
                f"in the true top {k} (confidential)": "yes" if flag else "no",
            }
            for (value, estimate, moe), flag in zip(hits, flags, strict=True)
        ]
    )


def _labelled(ws: Workspace, column: str) -> Callable[[str], str]:
    """How a found value is shown: "label (code)" where the plan labels the column."""
    try:
        schema = parse_schema(ws.plan.get("columns", {}))
    except DPReleaseError:
        return str
    return partial(with_label, schema[column]) if column in schema.names else str


def render_heavy_hitters(ws: Workspace, epsilon: float) -> None:
    """Heavy hitters of a text column: the values found, precision and recall, central DP."""
    st.subheader("Heavy hitters (write-in answers)")
    st.caption(
        "Each respondent sends one ε-LDP report about a prefix of their answer; the "
        "aggregator extends frequent prefixes byte by byte, so no list of possible answers "
        "is needed. Only values whose estimate stands above the noise are returned."
    )
    if ws.upload is None:
        st.info("Load data on the Data page to find its heavy hitters.")
        return
    st.warning(CONFIDENTIAL, icon=":material/lock:")
    column, top, length = _controls(ws, "ldp_hh")
    if st.button("Find heavy hitters", key="ldp_hh_run"):
        try:
            admit_ldp(LdpTask("heavy-hitters", length), upload_size(ws))  # issue 35
            texts, indices = dictionary_parts(parsed_table(ws)[column], column)
            values, codes = text_codes(list(texts), indices, column)
            result = heavy_hitters(values, codes, epsilon, top, length)
            truth = true_value_counts(values, codes, length)
            accuracy = precision_recall([h.value for h in result.top], truth, top)
            kept = (result, accuracy, top, column)
            st.session_state[HEAVY_KEY] = (require_upload(ws).sha256, kept)
        except DPReleaseError as error:
            st.error(md_error(error))
            return
    kept = _kept(ws, HEAVY_KEY)
    if kept is None:
        return
    result, accuracy, k, found_in = kept
    shown = _labelled(ws, found_in)  # issue 37: the plan's labels, where it declares them
    _hits_table([(shown(h.value), h.estimate, h.moe) for h in result.top], accuracy.in_true_top, k)
    left, right = st.columns(2)
    left.metric("Precision (confidential)", f"{accuracy.precision:.0%}")
    right.metric("Recall (confidential)", f"{accuracy.recall:.0%}")
    st.caption(
        md(
            f"ε = {result.epsilon:g}, {result.n:,} respondents; a count must exceed "
            f"{result.threshold:,.0f} to be told from noise (margin of a count near 0: "
            f"±{result.moe_near_zero:,.0f}). Central DP (a discrete Laplace histogram at the "
            f"same ε) would reach the same margin on a share with about "
            f"{_central(result):,.0f} respondents."
        )
    )


def render_itemsets(ws: Workspace, epsilon: float) -> None:
    """Frequent items and pairs of a set-valued column, precision and recall."""
    st.subheader("Itemsets (answers listing several items)")
    st.caption(
        f"Each answer lists items separated by '{SEPARATOR}' (e.g. 'English; Spanish'). "
        "Respondents pad their list to a common length and report one item, or one pair, "
        "chosen at random."
    )
    if ws.upload is None:
        st.info("Load data on the Data page to find its frequent items.")
        return
    column, top, length = _controls(ws, "ldp_is")
    if st.button("Find frequent items and pairs", key="ldp_is_run"):
        try:
            admit_ldp(LdpTask("itemsets", length), upload_size(ws))  # issue 35
            texts, indices = dictionary_parts(parsed_table(ws)[column], column)
            answers = parse_answers(list(texts), indices, column, length)
            result = frequent_itemsets(answers, epsilon, top, length)
            items, pairs = true_counts(answers)
            accuracy = (
                precision_recall([h.value for h in result.items], items, top),
                precision_recall([h.items for h in result.pairs], pairs, top),
            )
            st.session_state[ITEMSETS_KEY] = (require_upload(ws).sha256, (result, accuracy, top))
        except DPReleaseError as error:
            st.error(md_error(error))
            return
    kept = _kept(ws, ITEMSETS_KEY)
    if kept is None:
        return
    result, (item_accuracy, pair_accuracy), k = kept
    _hits_table([(h.value, h.estimate, h.moe) for h in result.items], item_accuracy.in_true_top, k)
    pair_rows = [(" + ".join(h.items), h.estimate, h.moe) for h in result.pairs]
    _hits_table(pair_rows, pair_accuracy.in_true_top, k)
    cells = st.columns(4)
    cells[0].metric("Items: precision", f"{item_accuracy.precision:.0%}")
    cells[1].metric("Items: recall", f"{item_accuracy.recall:.0%}")
    cells[2].metric("Pairs: precision", f"{pair_accuracy.precision:.0%}")
    cells[3].metric("Pairs: recall", f"{pair_accuracy.recall:.0%}")
    st.caption(
        md(
            f"ε = {result.epsilon:g}, {result.n:,} respondents; answers padded to "
            f"{result.pad_length} item(s) (the estimated 90th percentile of candidate items "
            f"per answer); margin of an item count near 0: ±{result.moe_near_zero:,.0f}. "
            "Central DP (discrete Laplace item counts at the same ε, each answer capped at "
            f"{result.pad_length} item(s)) would reach the same margin on a share with about "
            f"{_central(result, result.pad_length):,.0f} respondents."
        )
    )
