"""Admission of the `graph` stage (issue 35): the k-degree risk and the degree histogram,
estimated from the arguments and the edge list's size before an edge is read.

The edges are at most the file's bytes over 4 (`a,b` and a newline) or the rows a format
announces. Reading them and the degree pass grow with the edges and are held by the read's
own limits (`--max-data-mb`, `--max-rows`); the one part the arguments decide is the edge
search of the anonymisation, held by CONSTRUCT_MAX_WORK (about 2 s), beyond which the result
gives the lower bound instead: the path this estimator names and `anonymise_graph` takes.
"""

from __future__ import annotations

from dataclasses import dataclass

from dprelease.admission import Admitted, DataSize, Estimate, admit, register
from dprelease.graph.supergraph import CONSTRUCT_MAX_WORK
from dprelease.limits import GRAPH_DEFAULT_MAX_DEGREE

_MIN_EDGE_BYTES = 4  # "a,b\n": the shortest row of an edge list
_READ_NS_PER_EDGE = 600  # parse, dictionary-encode, sort and deduplicate one edge
_EDGE_BYTES = 64  # the two texts' codes, the sort's copies and the degree arrays
_CONSTRUCT_NS_PER_UNIT = 40  # one unit of `construct_work` here


@dataclass(frozen=True)
class GraphTask:
    """What `graph` is asked: `k` for the k-degree risk, else the degree histogram."""

    k: int | None = None
    max_degree: int = GRAPH_DEFAULT_MAX_DEGREE
    node_dp: bool = False


def graph_estimate(task: GraphTask, data: DataSize) -> Estimate:
    """Reading the edges (data-bound) plus, for `--k-degree`, the bounded edge search."""
    edges = data.rows if data.rows is not None else (data.bytes or 0) // _MIN_EDGE_BYTES
    work = edges * _READ_NS_PER_EDGE
    if task.k is not None:
        work += CONSTRUCT_MAX_WORK * _CONSTRUCT_NS_PER_UNIT
        path = f"k = {task.k}: edges searched within CONSTRUCT_MAX_WORK, else the lower bound"
    else:
        unit = "node" if task.node_dp else "edge"
        path = f"{unit}-DP degree histogram, degrees 1 … {task.max_degree}"
    return Estimate("graph", work, edges * _EDGE_BYTES, "CONSTRUCT_MAX_WORK", path, data_bound=True)


register("graph", graph_estimate)


def admit_graph(task: GraphTask, data: DataSize) -> Admitted:
    """The `graph` command's and the Risk page's admission, before the edges are read."""
    return admit(task, data, ("graph",))
