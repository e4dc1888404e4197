"""Risk: CONFIDENTIAL — the disclosure risk of the data holder's own data (k-anonymity,
l-diversity, t-closeness, attacks) and a reconstruction attack on exact vs DP tables."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from dprelease.data.count import load_data
from dprelease.errors import DPReleaseError
from dprelease.plan.schema import CategoricalColumn
from dprelease.risk.attacks import attacker_view
from dprelease.risk.classes import risk_input
from dprelease.risk.generalise import suggest_generalisations
from dprelease.risk.measures import DEFAULT_L, measure_risk
from dprelease.risk.reconstruct import reconstruction_attack
from ui.graph_view import render_graph_section
from ui.markdown import md, md_error, md_lines, static_table
from ui.risk_view import class_size_chart, keep, reconstruction_table, seed
from ui.state import current_plan, parsed_table, require_upload, workspace

ws = workspace()
st.title("Risk")
st.warning(
    "**CONFIDENTIAL — for your eyes only.** This page measures how identifiable the people in "
    "your own data are. Nothing here is part of a release, and nothing on it can be "
    "downloadable: static tables, charts without their save bar.",
    icon=":material/lock:",
)
render_graph_section()  # an edge list of its own: shown with or without tabular data
try:
    table = parsed_table(ws)
except DPReleaseError as error:
    st.error(md_error(error))
    st.stop()
plan, plan_problem = current_plan(ws)


def shown(name: str) -> Callable[[str], str]:
    """How a value of column `name` is shown: "label (code)" where the plan labels it."""
    column = plan.schema[name] if plan is not None and name in plan.schema else None
    return column.display if isinstance(column, CategoricalColumn) else str


columns = list(table.column_names)
default_qi = [c for c in ("county", "age", "sex", "race") if c in columns] or columns[:2]
st.subheader("Quasi-identifiers and sensitive attribute")
seed(ws, "risk_qi", default_qi, lambda v: isinstance(v, list) and set(v) <= set(columns))
qi = keep(
    ws,
    "risk_qi",
    st.multiselect("Quasi-identifiers (what an attacker may know)", columns, key="risk_qi"),
)
others = [c for c in columns if c not in qi]
if not qi or not others:
    st.info("Pick at least one quasi-identifier and leave a column to be the sensitive one.")
    st.stop()
seed(ws, "risk_sensitive", "education" if "education" in others else others[0], others.__contains__)
sensitive = keep(
    ws, "risk_sensitive", st.selectbox("Sensitive attribute", others, key="risk_sensitive")
)
k_col, l_col, c_col = st.columns(3)
for key, default in (("risk_k", 5), ("risk_l", DEFAULT_L), ("risk_c", 2.0)):
    seed(ws, key, default, lambda v: isinstance(v, int | float) and v > 0)
k = int(keep(ws, "risk_k", k_col.number_input("k to reach", 1, 1000, key="risk_k")))
l = int(  # noqa: E741
    keep(
        ws,
        "risk_l",
        l_col.number_input(
            "l of recursive (c, l)-diversity",
            1,
            1000,
            key="risk_l",
            help=(
                "Recursive (c, l)-diversity holds when, in every class, the most common "
                "sensitive value is rarer than c times the records of its l-th and less common "
                "values together. l is chosen apart from k: a sensitive attribute with fewer "
                "than l values can never be (c, l)-diverse."
            ),
        ),
    )
)
c = float(
    keep(
        ws,
        "risk_c",
        c_col.number_input("c of recursive (c, l)-diversity", 0.1, 100.0, key="risk_c"),
    )
)

try:
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
metrics[1].metric("unique records", f"{ka.unique:,}", f"{ka.unique_share:.1%}", delta_color="off")
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
    + (f": {md(sensitive)} has only {values} values, fewer than l = {l}." if values < l else ".")
)
class_size_chart(ka)

st.subheader("Homogeneity and skewness attacks")
a = report.attacks.to_dict()
st.write(
    f"**{a['homogeneous_rows']:,} records ({a['homogeneous_share']:.1%})** sit in classes where "
    f"everyone has the same {md(sensitive)}: knowing their quasi-identifiers reveals it. "
    f"{a['skewed_rows']:,} ({a['skewed_share']:.1%}) are in classes whose most common value is at "
    "least twice as common as overall (skewness)."
)
static_table(  # static: no download button
    [
        {
            **{name: shown(name)(value) for name, value in d.qi.items()},
            "class size": d.size,
            f"most common {sensitive}": shown(sensitive)(d.value),
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
            picks[i].selectbox(md(col.name), col.labels, key=know_key, format_func=shown(col.name)),
        )
    size, shares = attacker_view(data, known)
    if size == 0:
        st.write("Nobody in the data has these values.")
    else:
        st.write(f"The person is one of **{size}** records with these values:")
        static_table(
            [
                {sensitive: shown(sensitive)(v), "in the class": f"{p:.0%}", "overall": f"{q:.1%}"}
                for v, (p, q) in sorted(shares.items(), key=lambda x: -x[1][0])
                if p > 0
            ]
        )

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

st.subheader("Reconstruction attack: exact tables vs the DP release")
if plan is None:
    st.error(md_lines(plan_problem or "The plan is not valid."))
    st.stop()
st.write(
    "An attacker rebuilds each small area's records from its published tables with an "
    "integer program (as the Census Bureau did with its 2010 tables). The DP side is a "
    "**preview draw** through the release path at your plan's ε: numpy noise, charged to "
    "nothing, never published."
)
controls = st.columns(4)
geo = [col.name for col in plan.schema.columns if getattr(col, "parent", None)]
levels = geo or list(plan.schema.names)
seed(ws, "risk_level", levels[0], levels.__contains__)
seed(ws, "risk_max_areas", 50, lambda v: isinstance(v, int) and 1 <= v <= 5000)
seed(ws, "risk_seconds", 2.0, lambda v: isinstance(v, float) and 0.1 <= v <= 60)
seed(ws, "risk_per_area", False, lambda v: isinstance(v, bool))
level = keep(ws, "risk_level", controls[0].selectbox("Area level", levels, key="risk_level"))
max_areas = int(
    keep(
        ws,
        "risk_max_areas",
        controls[1].number_input("Areas to try", 1, 5000, key="risk_max_areas"),
    )
)
seconds = float(
    keep(
        ws,
        "risk_seconds",
        controls[2].number_input("Seconds per area", 0.1, 60.0, key="risk_seconds"),
    )
)
per_area = keep(
    ws, "risk_per_area", controls[3].toggle("Every table per area", key="risk_per_area")
)
if st.button("Run the attack", key="risk_attack", type="primary"):
    bar = st.progress(0.0, "Preparing the tables…")

    def show(share: float, text: str) -> None:
        bar.progress(min(share, 1.0), text)

    try:
        upload = require_upload(ws)
        encoded = load_data(upload.data, plan, filename=upload.name)
        result = reconstruction_attack(
            plan,
            encoded,
            level=level,
            seconds_per_area=seconds,
            max_areas=max_areas,
            per_area=per_area,
            progress=show,
        )
        ws.memo.risk_attack = result.to_dict()
    except DPReleaseError as error:
        st.error(md_error(error, "Nothing changed."))
    bar.empty()
attack = ws.memo.risk_attack
if attack is not None:
    reconstruction_table(attack)
