"""The Risk page's measures (CONFIDENTIAL, on this screen only): k-anonymity, l-diversity and
t-closeness of the chosen columns, the homogeneity and skewness attacks, what an attacker learns
of one person, and generalisations that reach k."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import streamlit as st

from dprelease.admission import DataSize
from dprelease.errors import DPReleaseError
from dprelease.plan.model import Plan
from dprelease.plan.schema import with_label
from dprelease.risk.attacks import attacker_view
from dprelease.risk.classes import RiskInput, risk_input
from dprelease.risk.cost import RiskTask, admit_risk
from dprelease.risk.generalise import suggest_generalisations
from dprelease.risk.measures import RiskReport, measure_risk
from ui.markdown import md, md_error, static_table
from ui.risk_inputs import RiskChoices
from ui.risk_view import class_size_chart, keep, seed
from ui.state import Workspace


def shown(plan: Plan | None, name: str) -> Callable[[str], str]:
    """How a value of column `name` is shown: "label (code)" where the plan labels it."""
    column = plan.schema[name] if plan is not None and name in plan.schema else None
    return str if column is None else lambda code: with_label(column, code)


def measures_section(
    ws: Workspace, table: pa.Table, plan: Plan | None, choices: RiskChoices
) -> tuple[RiskInput, RiskReport]:
    """The measures of the chosen columns and their headline figures (stops on a problem)."""
    qi, sensitive, k, l, c = choices.qi, choices.sensitive, choices.k, choices.l, choices.c  # noqa: E741
    try:
        task = RiskTask(len({*qi, sensitive}))
        admit_risk(task, DataSize(rows=table.num_rows))  # issue 35: before the measures
        data = risk_input(table, qi, sensitive, plan=plan)
        # t-closeness's ground distance: the plan's kind (categorical: equal; binned: ordered)
        ordered_key = f"risk_ordered__{sensitive}"
        seed(ws, ordered_key, data.sensitive.ordered, lambda v: isinstance(v, bool))
        ordered = keep(
            ws,
            ordered_key,
            st.toggle(
                f"Ordered distance between values of {md(sensitive)} (t-closeness)",
                key=ordered_key,
                help=(
                    "Equal distance: any two values are equally far apart (categories, e.g. race "
                    "codes). Ordered: neighbouring values are closer (numbers, bins, ordinal "
                    "scales, in domain order). Categorical columns of the plan are equal, numeric "
                    "ones ordered."
                ),
            ),
        )
        if ordered != data.sensitive.ordered:
            data = risk_input(table, qi, sensitive, plan=plan, ordered=ordered)
        report = measure_risk(data, k=k, c=c, l=l)
    except DPReleaseError as error:
        st.error(md_error(error))
        st.stop()
    ka, ld, tc = report.k, report.l, report.t
    metrics = st.columns(5)
    metrics[0].metric("k (smallest class)", ka.k)
    metrics[1].metric(
        "unique records", f"{ka.unique:,}", f"{ka.unique_share:.1%}", delta_color="off"
    )
    metrics[2].metric(
        f"records in classes < {k}", f"{ka.below_k:,}", f"{ka.below_k_share:.1%}", delta_color="off"
    )
    metrics[3].metric("distinct l / entropy l", f"{ld.l_distinct} / {ld.l_entropy:.2f}")
    metrics[4].metric(f"t ({tc.ground} distance)", f"{tc.t:.3f}")
    values = len(data.sensitive.labels)
    st.write(
        f"{ka.rows:,} records in {ka.classes:,} classes. Recursive ({c:g}, {l})-diversity "
        f"**{'holds' if ld.recursive_cl else 'fails'}** "
        f"({ld.classes_failing_recursive:,} classes fail)"
        + (
            f": {md(sensitive)} has only {values} values, fewer than l = {l}."
            if values < l
            else "."
        )
    )
    class_size_chart(ka)
    return data, report


def attacks_section(
    ws: Workspace, plan: Plan | None, choices: RiskChoices, data: RiskInput, report: RiskReport
) -> None:
    """The homogeneity and skewness attacks, and one person's view from the attacker."""
    qi, sensitive = choices.qi, choices.sensitive
    st.subheader("Homogeneity and skewness attacks")
    a = report.attacks.to_dict()
    st.write(
        f"**{a['homogeneous_rows']:,} records ({a['homogeneous_share']:.1%})** sit in classes "
        f"where everyone has the same {md(sensitive)}: knowing their quasi-identifiers reveals "
        f"it. {a['skewed_rows']:,} ({a['skewed_share']:.1%}) are in classes whose most common "
        "value is at least twice as common as overall (skewness)."
    )
    static_table(  # static: no download button
        [
            {
                **{name: shown(plan, name)(value) for name, value in d.qi.items()},
                "class size": d.size,
                f"most common {sensitive}": shown(plan, sensitive)(d.value),
                "attacker's belief": f"{d.posterior:.0%}",
                "overall share": f"{d.prior:.1%}",
                "lift": f"×{d.lift:.1f}",
            }
            for d in report.attacks.worst[:10]
        ]
    )
    with st.expander("What does an attacker learn about one person?"):
        picks = st.columns(len(qi))
        known = {}
        for i, col in enumerate(data.qi):
            know_key = f"risk_know_{col.name}"
            seed(ws, know_key, col.labels[0], col.labels.__contains__)
            known[col.name] = keep(
                ws,
                know_key,
                picks[i].selectbox(
                    md(col.name), col.labels, key=know_key, format_func=shown(plan, col.name)
                ),
            )
        size, shares = attacker_view(data, known)
        if size == 0:
            st.write("Nobody in the data has these values.")
        else:
            st.write(f"The person is one of **{size}** records with these values:")
            static_table(
                [
                    {
                        sensitive: shown(plan, sensitive)(v),
                        "in the class": f"{p:.0%}",
                        "overall": f"{q:.1%}",
                    }
                    for v, (p, q) in sorted(shares.items(), key=lambda x: -x[1][0])
                    if p > 0
                ]
            )


def generalisations_section(
    table: pa.Table,
    plan: Plan | None,
    plan_problem: str | None,
    choices: RiskChoices,
    data: RiskInput,
    report: RiskReport,
) -> None:
    """Generalisations along the plan's hierarchy and bins that reach k."""
    k, ka = choices.k, report.k
    st.subheader(f"Generalisations that reach k = {k}")
    suggestions, tried = suggest_generalisations(table, data, k, plan)
    if plan is None:
        st.caption(f"The plan does not parse ({md(plan_problem)}); only suppression is suggested.")
    if suggestions:
        static_table(
            [
                {
                    **s.levels,
                    "k": s.k,
                    "classes": s.classes,
                    "detail lost": f"{s.precision_loss:.0%}",
                    "records per class (avg)": f"{s.mean_class_size:.0f}",
                }
                for s in suggestions
            ]
        )
        st.caption(
            f"From the plan's hierarchy and bins; {tried} combinations tried. 'Detail lost' is the "
            "mean share of each ladder climbed (0 % raw, 100 % suppressed). Suppressing the "
            f"{ka.below_k:,} records in small classes instead would drop {ka.below_k_share:.1%}."
        )
    else:
        st.write(f"No combination within {tried} tried reaches k = {k}.")
