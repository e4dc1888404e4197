"""Bench: the DP degree distribution of a 1,000,000-edge graph (target ≤ 10 s, issue 28).

Each run reads the edge list CSV (pyarrow, the house reader with its ledger fingerprint),
builds the simple graph (repeats merged, self-loops checked), counts the degrees
(numpy bincount) and draws the released histogram with the secure sampler: once under edge-DP
and once under node-DP (the projection to D decides every edge that touches a node above D,
in Python). Prints each run and the medians, in wall-clock seconds and in CPU seconds of this
process (all its threads: pyarrow reads with several), which a busy shared machine inflates less.

The graph: `--nodes` nodes, each edge's ends drawn with a heavy tail (a node's chance
∝ 1/(rank + 10)), so that a few hubs exceed D as in a contact network; self-loops are
redrawn. Written once to a temporary CSV.

    python bench/bench_graph_degrees.py [--runs 5] [--edges 1000000] [--nodes 200000] [--d 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dprelease.graph.edges import read_edges
from dprelease.graph.release import DegreeQuery, draw_degree_release, true_histogram


def write_graph(path: Path, edges: int, nodes: int) -> None:
    rng = np.random.default_rng(0)
    weights = 1 / (np.arange(nodes) + 10.0)
    weights /= weights.sum()
    a = rng.choice(nodes, size=edges, p=weights)
    b = rng.choice(nodes, size=edges, p=weights)
    loops = a == b
    b[loops] = (b[loops] + 1 + rng.integers(0, nodes - 1, loops.sum())) % nodes
    lines = "\n".join(f"n{x},n{y}" for x, y in zip(a.tolist(), b.tolist(), strict=True))
    path.write_text("source,target\n" + lines + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--nodes", type=int, default=200_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "edges.csv"
        write_graph(path, args.edges, args.nodes)
        print(f"edge list: {path.stat().st_size / 1e6:.1f} MB, {args.edges:,} rows")
        timings: dict[str, list[float]] = {"read": [], "edge-DP": [], "node-DP": [], "total": []}
        cpu_totals: list[float] = []
        for run in range(args.runs):
            cpu = time.process_time()
            start = time.perf_counter()
            graph = read_edges(path)
            read = time.perf_counter()
            edge_query = DegreeQuery(args.epsilon, args.d)
            draw_degree_release(true_histogram(graph, edge_query), edge_query)
            edge_dp = time.perf_counter()
            node_query = DegreeQuery(args.epsilon, args.d, node_dp=True)
            draw_degree_release(true_histogram(graph, node_query), node_query)
            node_dp = time.perf_counter()
            cpu_totals.append(time.process_time() - cpu)
            for name, seconds in (
                ("read", read - start),
                ("edge-DP", edge_dp - read),
                ("node-DP", node_dp - edge_dp),
                ("total", node_dp - start),
            ):
                timings[name].append(seconds)
            above = int(np.count_nonzero(graph.degrees() > args.d))
            print(
                f"run {run + 1}: read {read - start:.2f} s, edge-DP {edge_dp - read:.2f} s, "
                f"node-DP {node_dp - edge_dp:.2f} s, total {node_dp - start:.2f} s "
                f"(CPU {cpu_totals[-1]:.2f} s) "
                f"({graph.nodes:,} nodes, {graph.edges:,} distinct edges, {above:,} above D)"
            )
        medians = ", ".join(f"{k} {statistics.median(v):.2f} s" for k, v in timings.items())
        print(
            f"{args.edges:,} edges, D = {args.d}: medians over {args.runs} runs: {medians}; "
            f"CPU total {statistics.median(cpu_totals):.2f} s"
        )


if __name__ == "__main__":
    main()
