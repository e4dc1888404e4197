"""Degree histograms, and the node-DP projection to a degree bound D (CONFIDENTIAL inputs).

The released histogram counts the nodes of each degree 1, 2, …, D. Degree 0 is never a bin:
an edge list cannot show a node with no edge, so a node that has none (or keeps none after the
projection) is simply not there, whatever the neighbouring graph holds.

**Edge-DP** (neighbouring graphs differ by one edge {u, v}). The top bin counts the degrees D
and above ("D or more"). Adding the edge moves u from the bin of d_u to the bin of d_u + 1, at
most −1 in one bin and +1 in another (a node seen for the first time: +1 only), and likewise v:
the histogram moves by at most 4 in L1 (and L2² ≤ 4). Bins clamped at D only merge moves.
**Δ₁ = 4.**

**Node-DP with degree bound D** (neighbouring graphs differ by one node v⁺ and all its edges,
however many). A raw histogram has no useful bound (v⁺ may join every node), so the graph is
first *projected* (`project`): the edges are taken in a fixed order on pairs of node names
(`dprelease.graph.edges`: it does not depend on the data), and an edge is kept when both its
ends have kept fewer than D edges so far (the edge-addition projection of Day, Li & Lyu,
SIGMOD 2016). The notes (seed 001) teach degree attacks and Laplace sensitivity but do not
derive this bound; it is derived here.

*Claim: the projected histograms of G and G′ = G + v⁺ differ by at most 2D + 1 in L1.* Run the
projection on both side by side over the merged order (the common edges keep their relative
order; the edges of v⁺ are inserted among them). Let Φ = Σ_{w ≠ v⁺} |d′(w) − d(w)| over the
kept degrees so far.

- An edge of v⁺ exists in G′ only; when G′ keeps it, Φ grows by at most 1 (its other end).
  v⁺ keeps at most D edges, so this adds at most D in all.
- A common edge {p, q}: if both runs decide alike, Φ is unchanged. If G keeps it and G′ does
  not, some end, say p, is full in G′ (d′(p) = D) and not in G (d(p) < D), so d′(p) − d(p) ≥ 1
  and keeping it in G lowers |d′(p) − d(p)| by 1 while |d′(q) − d(q)| grows by at most 1: Φ
  does not grow. The other way round is symmetric.

So at the end Φ ≤ D: at most D nodes other than v⁺ have a different projected degree, each
moving the histogram by at most 2, and v⁺ adds at most 1 (it has a bin only if it keeps an
edge). **Δ₁ = 2D + 1** (and every projected degree is at most D, so no bin is clamped).
The same run shows that one edge more or less moves the projected degrees by Φ ≤ 2, so the
projection is also safe under edge-DP (Δ₁ = 4).

An edge whose two ends both have degree ≤ D is always kept (each end has kept fewer than its
degree when the edge comes), so only the edges touching a node above D are decided one by one.
"""

from __future__ import annotations

import numpy as np

from dprelease.graph.edges import EdgeList


def edge_dp_sensitivity() -> int:
    """Δ₁ of the degree histogram under edge-DP (see the module docstring)."""
    return 4


def node_dp_sensitivity(max_degree: int) -> int:
    """Δ₁ of the projected degree histogram under node-DP: 2D + 1 (module docstring)."""
    return 2 * max_degree + 1


def degree_histogram(degrees: np.ndarray, max_degree: int) -> np.ndarray:
    """CONFIDENTIAL: nodes of degree 1, 2, …, D (index 0 is degree 1), degrees above D in the
    top bin; nodes of degree 0 are not counted."""
    kept = degrees[degrees > 0]
    clamped = np.minimum(kept, max_degree)
    counts: np.ndarray = np.bincount(clamped, minlength=max_degree + 1)[1:].astype(np.int64)
    return counts


def project(edges: EdgeList, max_degree: int) -> np.ndarray:
    """CONFIDENTIAL: each node's degree after the edge-addition projection to D (by node id).

    Only the edges with an end above D are decided in order, and only those ends' kept degrees
    matter for the decision (an end of degree ≤ D is never full when its edge comes).
    """
    degrees = edges.degrees()
    high = degrees > max_degree
    hard = np.flatnonzero(high[edges.first] | high[edges.second])
    if hard.size == 0:
        return degrees
    kept_of_high = np.zeros(edges.nodes, dtype=np.int64)
    rejected = np.zeros(hard.size, dtype=bool)
    first, second = edges.first[hard].tolist(), edges.second[hard].tolist()
    high_list = high.tolist()
    full = max_degree
    kept = kept_of_high.tolist()
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        if (high_list[a] and kept[a] >= full) or (high_list[b] and kept[b] >= full):
            rejected[i] = True
            continue
        kept[a] += 1  # a low end's entry is never read: only high ends can be full
        kept[b] += 1
    projected = degrees.copy()
    projected[high] = np.asarray(kept, dtype=np.int64)[high]
    lost = np.bincount(
        np.concatenate([edges.first[hard][rejected], edges.second[hard][rejected]]),
        minlength=edges.nodes,
    )
    projected[~high] -= lost[~high]
    return projected
