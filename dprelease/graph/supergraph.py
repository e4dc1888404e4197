"""CONFIDENTIAL: a k-degree anonymous supergraph, near the fewest edges (issue 38.5).

One **round** takes the optimal k-anonymous degree sequence of the graph as it is
(`degree_sequence.optimal_degrees`) and adds edges towards it:

1. **Pairs of raised nodes** (Havel–Hakimi on the raises): the node with the largest raise
   left is joined to the raised nodes with the largest raises left that it is not joined to
   yet. Each such edge serves two raises, as the lower bound counts.
2. **Spare partners**: what a node cannot get that way (a hub raised by hundreds when the
   other raises are few, or the odd unit of an odd total) goes to nodes that need no raise,
   taken from a degree class that stays k-anonymous when one of them moves up one
   (`Classes.take`): the class keeps ≥ k nodes and the class above has or reaches ≥ k.
   Such an edge serves one raise, not two: the only edges above the lower bound.

When no class can spare a node (small graphs), the unit goes to a node of the largest class
all the same, and the next round re-runs the DP on the new degrees: a minimal relaxation of
the sequence instead of raising all the lowest degrees (the probing this replaced doubled
the edges). Rounds stop at k-degree anonymity, after MAX_ROUNDS, or at the work bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprelease.errors import InternalError
from dprelease.graph.degree_sequence import optimal_degrees
from dprelease.graph.edges import EdgeList

CONSTRUCT_MAX_WORK = 50_000_000
"""The most work all rounds of one anonymisation may take together, in units of
`construct_work` (about 40 ns each here: some 2 s). Measured before the bound: 300,000 edges
at k = 20,000 took 190 s (issue 35). Beyond it the edges are not searched for, and the
sequence's edges are reported with the lower bound."""

MAX_ROUNDS = 24
"""Rounds of re-running the DP after a round left the degrees short of k (measured on 600
random graphs of 6 to 60 nodes: 96% need one, the worst 21; BA and ER graphs of 10,000
nodes need one)."""


def construct_work(raised: int, units: int = 0) -> int:
    """The estimated work of one round: R steps over the `raised` nodes, each a Python step
    (~1,000 units) and numpy passes over the R nodes, and ~60 units for each unit of raise
    (an edge's bookkeeping, a spare's pick). Measured on the 1 M-edge bench graph: 0.4 s at
    R = 508 and 20,940 units, 2.4 s at R = 3,196 and 809,280 units."""
    return raised * (1_000 + raised) + 60 * units


@dataclass(frozen=True)
class Anonymised:
    """CONFIDENTIAL: the degrees reached (by node id), the new edges (None: not found or not
    tried) and the rounds it took."""

    target: np.ndarray
    added: list[tuple[int, int]] | None
    rounds: int
    tried: bool = True  # False: the work bound stopped it before the first round


class Classes:
    """The final degree classes, and the nodes needing no raise that may move up one."""

    def __init__(self, target: np.ndarray, spare: np.ndarray, k: int):
        values, sizes = np.unique(target, return_counts=True)
        self.count: dict[int, int] = dict(zip(values.tolist(), sizes.tolist(), strict=True))
        self.pool: dict[int, list[int]] = {}
        for node in spare[np.argsort(target[spare], kind="stable")].tolist():
            self.pool.setdefault(int(target[node]), []).append(node)
        self.k = k

    def room(self, c: int) -> int:
        """How many nodes class c can send up one while both classes stay ≥ k."""
        if self.count.get(c + 1, 0) + 1 < self.k:
            return 0
        return min(self.count.get(c, 0) - self.k, len(self.pool.get(c, ())))

    def take(
        self, need: int, joined: set[int], node: int, *, forced: bool, upward: bool = False
    ) -> list[int]:
        """Up to `need` spare nodes not joined to `node`, moved up one each; `forced`: from
        the largest classes even where that breaks k (the next round repairs it), or with
        `upward` from the highest degrees."""
        taken: list[int] = []
        tried: set[int] = set()
        while len(taken) < need:
            rooms = {c: self.room(c) for c in self.pool if c not in tried}
            if forced:
                rooms = {c: len(self.pool[c]) for c in rooms}
            rooms = {c: r for c, r in rooms.items() if r > 0}
            if not rooms:
                return taken
            c = max(rooms) if forced and upward else max(rooms, key=lambda c: (rooms[c], -c))
            tried.add(c)
            pool, kept = self.pool[c], []
            while pool and len(taken) < need and (forced or self.room(c) > 0):
                w = pool.pop()
                if w in joined or w == node:
                    kept.append(w)
                    continue
                taken.append(w)
                joined.add(w)  # never taken twice for one node
                self.count[c] -= 1
                self.count[c + 1] = self.count.get(c + 1, 0) + 1
                self.pool.setdefault(c + 1, []).append(w)
            pool.extend(kept)
        return taken


def neighbours(
    edges: EdgeList, nodes: np.ndarray, added: list[tuple[int, int]]
) -> dict[int, set[int]]:
    """Each of `nodes`' neighbours (a set), the edges added so far included."""
    wanted = np.zeros(edges.nodes, dtype=bool)
    wanted[nodes] = True
    ends = np.concatenate([edges.first, edges.second])
    others = np.concatenate([edges.second, edges.first])
    keep = wanted[ends]
    ends, others = ends[keep], others[keep]
    order = np.argsort(ends, kind="stable")
    ends, others = ends[order], others[order]
    cuts = np.searchsorted(ends, nodes)
    stops = np.searchsorted(ends, nodes, side="right")
    found = {
        int(v): set(others[a:b].tolist())
        for v, a, b in zip(nodes.tolist(), cuts.tolist(), stops.tolist(), strict=True)
    }
    for u, v in added:
        if u in found:
            found[u].add(v)
        if v in found:
            found[v].add(u)
    return found


def one_round(
    edges: EdgeList,
    degrees: np.ndarray,
    target: np.ndarray,
    k: int,
    added: list[tuple[int, int]],
    upward: bool = False,
) -> list[tuple[int, int]]:
    """New edges towards `target` from `degrees` (the edges in `added` included)."""
    nodes = np.flatnonzero(target > degrees)
    left = (target - degrees)[nodes]
    joined = neighbours(edges, nodes, added)
    classes = Classes(target, np.flatnonzero(target == degrees), k)
    position = {int(v): i for i, v in enumerate(nodes.tolist())}
    # Ties of the raise left go to the node of larger degree: it has more edges already, so
    # fewer partners left; served last, it finds them taken.
    tie = degrees[nodes] / (degrees[nodes].max(initial=0) + 1.0)
    new: list[tuple[int, int]] = []
    for _ in range(nodes.size):
        i = int(np.argmax(left + tie * (left > 0)))
        need = int(left[i])
        if need <= 0:
            break
        v = int(nodes[i])
        left[i] = 0
        free = left > 0
        free[[position[u] for u in joined[v] if u in position]] = False
        others = np.flatnonzero(free)
        if others.size > need:  # the largest raises left (argpartition: O(R) a step)
            others = others[np.argpartition(-(left[others] + tie[others]), need - 1)[:need]]
        left[others] -= 1
        partners = nodes[others].tolist()
        rest = need - len(partners)
        if rest:
            spares = classes.take(rest, joined[v], v, forced=False)
            spares += classes.take(rest - len(spares), joined[v], v, forced=True, upward=upward)
            partners += spares
        for u in partners:
            joined[v].add(u)
            if u in joined:
                joined[u].add(v)
            new.append((min(u, v), max(u, v)))
    return new


def anonymise_graph(edges: EdgeList, target_k: int) -> Anonymised:
    """Rounds of the optimal sequence and its edges until the degrees are k-degree anonymous
    (module docstring); `added` is None when that takes more than MAX_ROUNDS or the work
    bound (`tried` False: not even the first round fitted).

    When one round is not enough (small graphs, where the odd unit or a forced partner
    breaks a class), the rounds are tried again a few ways within the same work bound and
    the fewest edges kept: forced partners from the highest degrees, and Liu–Terzi's probing
    (the p lowest degrees raised by one before the first DP, p = 1, 2, 4, 8). The notes'
    graph takes 5 edges so (8 the first way, 3 by the greedy this replaced, 2 at best)."""
    best, spent = _rounds(edges, target_k, upward=False, probes=0, spent=0)
    if best.rounds <= 1 or not best.tried:
        return best
    for upward, probes in ((True, 0), (False, 1), (False, 2), (False, 4), (False, 8)):
        found, spent = _rounds(edges, target_k, upward=upward, probes=probes, spent=spent)
        if found.added is not None and (best.added is None or len(found.added) < len(best.added)):
            best = found
    return best


def _rounds(
    edges: EdgeList, target_k: int, *, upward: bool, probes: int, spent: int
) -> tuple[Anonymised, int]:
    original = edges.degrees()
    degrees = original.copy()
    probed = degrees.copy()
    probed[np.argsort(degrees, kind="stable")[:probes]] += 1
    added: list[tuple[int, int]] = []
    for rounds in range(MAX_ROUNDS + 1):
        target = optimal_degrees(probed if rounds == 0 else degrees, target_k)
        if (target == degrees).all():
            return Anonymised(degrees, added, rounds), spent
        raises = target - degrees
        spent += construct_work(int(np.count_nonzero(raises)), int(raises.sum()))
        if spent > CONSTRUCT_MAX_WORK or rounds == MAX_ROUNDS:
            return Anonymised(original, None, rounds, tried=rounds > 0), spent
        new = one_round(edges, degrees, target, target_k, added, upward)
        added += new
        degrees += np.bincount(np.array(new, dtype=np.int64).ravel(), minlength=degrees.size)
    raise InternalError("unreachable: the loop returns by its last round")
