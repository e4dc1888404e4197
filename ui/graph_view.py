"""The Risk page's network section (issue 28, part 3): an edge list's k-degree risk
(CONFIDENTIAL: static, nothing downloadable) and its DP degree distribution (a release:
charged to the ledger, then shown as a chart and offered as a download).

State lives in this session only (`st.session_state["graph_session"]`): the uploaded edge
list's bytes are read once per upload; a release is drawn only inside the form's submit branch,
so a rerun never draws again.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field

import plotly.graph_objects as go
import streamlit as st

from dprelease.admission import DataSize
from dprelease.data import formats
from dprelease.errors import DPReleaseError
from dprelease.graph.anonymity import measure_degree_risk, unique_nodes
from dprelease.graph.cost import GraphTask, admit_graph
from dprelease.graph.edges import EdgeList, read_edges
from dprelease.graph.release import DegreeQuery, PublishedDegrees, charged_degree_release
from dprelease.ledger.store import AlreadyChargedError
from dprelease.limits import EPSILON_LIMIT, GRAPH_DEFAULT_MAX_DEGREE, GRAPH_MAX_DEGREE_LIMIT
from dprelease.release import service
from dprelease.release.export import files_zip
from ui.axes import category_axis
from ui.markdown import md, md_error, static_table
from ui.risk_view import NO_MODE_BAR

SESSION_KEY = "graph_session"
UNITS = {"edge": "Edge-DP: one edge", "node": "Node-DP: one node with all its edges"}
UNIQUE_SHOWN = 20


@dataclass
class GraphSession:
    """CONFIDENTIAL (this browser session only): the edge list read, and what was released."""

    sha256: str | None = None
    name: str = ""
    edges: EdgeList | None = field(default=None, repr=False)
    error: str | None = None
    published: PublishedDegrees | None = field(default=None, repr=False)


def _session() -> GraphSession:
    state = st.session_state.get(SESSION_KEY)
    if not isinstance(state, GraphSession):
        state = GraphSession()
        st.session_state[SESSION_KEY] = state
    return state


def _read_upload(state: GraphSession) -> None:
    uploaded = st.file_uploader(
        f"Edge list ({formats.FORMAT_NAMES}): the first two columns are the two end nodes",
        type=formats.upload_types(),
        key="graph_upload",
    )
    if uploaded is None:
        return
    data = uploaded.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    if digest == state.sha256:
        return  # read already (a rerun)
    state.sha256, state.name, state.published = digest, uploaded.name, None
    try:
        state.edges, state.error = read_edges(data, filename=uploaded.name), None
    except DPReleaseError as error:
        state.edges, state.error = None, md_error(error)


def render_graph_section() -> None:
    """The whole network section: upload, k-degree risk, DP degree distribution."""
    with st.expander("Network data: k-degree risk and a DP degree distribution of an edge list"):
        state = _session()
        _read_upload(state)
        if state.error:
            st.error(state.error)
        if state.edges is None:
            st.caption(
                "A graph is read as undirected and simple: a repeated edge (either direction) "
                "counts once, and a self-loop is refused."
            )
            return
        _risk(state.edges)
        _release(state)


def _risk(edges: EdgeList) -> None:
    target = int(st.number_input("k to reach (degree)", 1, 1000, value=2, key="graph_k"))
    try:
        admit_graph(GraphTask(k=target), DataSize(rows=edges.rows))  # issue 35
        risk = measure_degree_risk(edges, target)
    except DPReleaseError as error:
        st.error(md_error(error))
        return
    cells = st.columns(4)
    cells[0].metric("k-degree (smallest degree class)", risk.k)
    cells[1].metric("nodes unique by degree", f"{risk.unique_by_degree:,}")
    cells[2].metric(f"nodes in degree classes < {target}", f"{risk.below_target:,}")
    cells[3].metric("nodes / edges", f"{risk.nodes:,} / {risk.edges:,}")
    a = risk.anonymisation
    found = a.construction_text()
    st.write(
        f"An attacker who knows a person's number of contacts finds them alone in "
        f"**{risk.unique_by_degree:,}** cases. To make every degree shared by at least "
        f"{target} nodes (Liu–Terzi greedy degree anonymisation), raise "
        f"**{a.nodes_raised:,}** nodes' degrees: **{a.edges_to_add:,} edges to add** "
        f"(k afterwards: {a.k_after}); the edges were {found}."
        + (f" {risk.merged:,} repeated edges were merged." if risk.merged else "")
    )
    alone = unique_nodes(edges, UNIQUE_SHOWN)
    if alone:
        st.caption(f"Nodes alone with their degree (CONFIDENTIAL; up to {UNIQUE_SHOWN}):")
        static_table([{"node": name, "degree": degree} for name, degree in alone])


def _release(state: GraphSession) -> None:
    st.markdown("**Release a DP degree distribution** (not confidential: charged, then public)")
    with st.form("graph_release_form"):
        left, middle, right = st.columns(3)
        unit = left.radio(
            "Privacy unit", list(UNITS), format_func=UNITS.__getitem__, key="graph_unit"
        )
        epsilon = middle.number_input(
            "ε", 0.01, EPSILON_LIMIT, value=1.0, key="graph_epsilon", format="%g"
        )
        bound = right.number_input(
            "Degree bound D (public)",
            1,
            GRAPH_MAX_DEGREE_LIMIT,
            value=GRAPH_DEFAULT_MAX_DEGREE,
            key="graph_max_degree",
            help="Node-DP keeps at most D edges per node (sensitivity 2D + 1); edge-DP puts "
            "degrees from D up in the last bin (sensitivity 4). Never take it from the data.",
        )
        asked = st.form_submit_button("Release and charge ε")  # a fixed label: a fixed id
    if asked and state.edges is not None:
        try:
            query = DegreeQuery(float(epsilon), int(bound), node_dp=unit == "node")
            task = GraphTask(max_degree=query.max_degree, node_dp=query.node_dp)
            admit_graph(task, DataSize(rows=state.edges.rows))  # issue 35: before any charge
            account = service.account_of(
                service.open_ledger(), state.edges.fingerprint, None, state.edges.file_sha256
            )
            state.published = charged_degree_release(
                state.edges, query, account, release_id=secrets.token_hex(16)
            )
        except AlreadyChargedError:
            st.info("This release was already charged; it was not drawn again.")
        except DPReleaseError as error:
            st.error(md_error(error, "Nothing was charged."))
    if state.published is not None:
        _show(state.published)


def _show(published: PublishedDegrees) -> None:
    release, query = published.release, published.release.query
    rows = release.rows()
    figure = go.Figure(
        go.Bar(
            x=[r["degree_label"] for r in rows],
            y=[r["count"] for r in rows],
            error_y={"type": "constant", "value": query.moe, "visible": True},
        )
    )
    figure.update_layout(
        title=f"Released degree distribution ({query.privacy_unit}-DP, ε = {query.epsilon:g})",
        xaxis=category_axis("degree"),
        yaxis_title="nodes (released)",
        height=320,
        margin={"t": 40, "b": 40},
    )
    st.plotly_chart(figure, key="graph_histogram", config=NO_MODE_BAR)
    charged = (
        f"charged ε = {query.epsilon:g} to this edge list's ledger account "
        f"(release {md(published.entry.release_id)})"
        if published.entry is not None
        else "charged to no ledger"
    )
    st.caption(
        f"{release.released_nodes:,} nodes released (a noisy sum, not the true number); "
        f"±{round(query.moe)} per bin at 95%; Δ₁ = {query.sensitivity}; {charged}."
    )
    st.download_button(
        "Download the release (zip: degree_histogram.csv, metadata.json)",
        files_zip(published.files),
        file_name="degree_histogram.zip",
        mime="application/zip",
        key="graph_download",
    )
