"""CONFIDENTIAL: a k-degree anonymous supergraph, near the fewest edges (issue 38.5).

One **round** takes the optimal k-anonymous degree sequence of the graph as it is
(`degree_sequence.optimal_degrees`) and adds edges towards it:

1. **Pairs of raised nodes** (Havel–Hakimi on the raises): the node with the largest raise
   left is joined to the raised nodes with the largest raises left that it is not joined to
   yet. Each such edge serves two raises, as the lower bound counts.
2. **Spare partners**: what a node cannot get that way (a hub raised by hundreds when the
   other raises are few, or the odd unit of an odd total) goes to nodes that need no raise,
   taken from a degree class that stays k-anonymous when they move up one (`Classes.take`):
   the class keeps ≥ k nodes or moves up whole, and the class above has or reaches ≥ k.
   Such an edge serves one raise, not two: the only edges above the lower bound.

When no class can spare a node (small graphs), the unit goes to a node of the largest class
all the same, and the next round re-runs the DP on the new degrees: a minimal relaxation of
the sequence instead of raising all the lowest degrees. Rounds stop at k-degree anonymity,
after MAX_ROUNDS, or at the work bound.

On a small graph one way can go wrong where another does not, so several are tried within
the work bound and the fewest edges kept (`anonymise_graph`, `candidates`): the greedy this
module replaced is one of them, so the result never has more edges than it had. The notes'
graph (7 nodes, k = 2) shows why: the DP raises the first of the three nodes of degree 3 by
id (Alice) to 5, but her non-neighbours are in different classes, and one partner moved up
leaves a class of one, so forced partners and re-run rounds took 5 to 9 edges (the greedy:
3). Raising Fred instead, whose non-neighbours Alice and Bob are the whole class of degree 3
and move up to 4 together (which the one-node-at-a-time check of a class forbade), takes 2,
the optimum.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from dprelease.errors import InternalError
from dprelease.graph.degree_sequence import (
    edges_lower_bound,
    even_raise,
    greedy_degrees,
    optimal_degrees,
)
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


SMALL_RAISE = 400
SMALL_NODES = 5_000
"""A graph of at most SMALL_NODES nodes whose optimal sequence raises its degrees by at most
SMALL_RAISE in all is small: when the first way ends above the lower bound, up to
SMALL_MAX_WORK more work goes to other ways (`candidates`). (A Barabási–Albert graph of
10,000 nodes at k = 5 raises 356 units; searching it took 0.4 s and found no fewer edges.)"""

SMALL_MAX_WORK = 10_000_000
"""The work the other ways may take on a small graph (some 0.4 s), within CONSTRUCT_MAX_WORK."""

TIE_ORDERS = 24
"""Seeded orders of the nodes of equal degree tried on a small graph."""


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

    def room(self, c: int, need: int) -> int:
        """How many nodes (at most `need`) class c can send up one together while both classes
        stay ≥ k or empty: the whole class when all of it is spare (two nodes of degree 3 at
        k = 2 move to 4 together), else all but k of it, and the class above must reach k."""
        count, above = self.count.get(c, 0), self.count.get(c + 1, 0)
        spare = min(need, len(self.pool.get(c, ())))
        moved = count if count <= spare else min(spare, count - self.k)
        return moved if moved > 0 and above + moved >= self.k else 0

    def take(
        self, need: int, joined: set[int], node: int, *, forced: bool, upward: bool = False
    ) -> list[int]:
        """Up to `need` spare nodes not joined to `node`, moved up one each; `forced`: from
        the largest classes even where that breaks k (the next round repairs it), or with
        `upward` from the highest degrees."""
        taken: list[int] = []
        tried: set[int] = set()
        while len(taken) < need:
            left = need - len(taken)
            rooms = {c: self.room(c, left) for c in self.pool if c not in tried}
            if forced:
                rooms = {c: min(left, len(self.pool[c])) for c in rooms}
            rooms = {c: r for c, r in rooms.items() if r > 0}
            if not rooms:
                return taken
            c = max(rooms) if forced and upward else max(rooms, key=lambda c: (rooms[c], -c))
            tried.add(c)
            pool, popped = self.pool[c], []
            chosen: list[int] = []
            while pool and len(chosen) < rooms[c]:
                popped.append(pool.pop())
                if popped[-1] not in joined and popped[-1] != node:
                    chosen.append(popped[-1])
            count, moved = self.count[c], len(chosen)
            fits = (count - moved >= self.k or count == moved) and (
                self.count.get(c + 1, 0) + moved >= self.k
            )
            if not (fits or forced):  # some were joined to `node`: the rest would break k
                pool.extend(reversed(popped))
                continue
            pool.extend(w for w in reversed(popped) if w not in chosen)
            self.pool.setdefault(c + 1, []).extend(chosen)
            self.count[c] -= moved
            self.count[c + 1] = self.count.get(c + 1, 0) + moved
            taken += chosen
            joined.update(chosen)  # never taken twice for one node
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
    strategy: Strategy | None = None,
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
        if others.size > need:  # the largest raises left, ties to the first (O(R) a step)
            score = left[others] + tie[others]
            cut = np.partition(score, others.size - need)[others.size - need]
            over, at = others[score > cut], others[score == cut]
            others = np.concatenate([over, at[: need - over.size]])
        left[others] -= 1
        partners = nodes[others].tolist()
        rest = need - len(partners)
        if rest and not (strategy and strategy.pairs_only):
            upward = strategy is not None and strategy.upward
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

    The first way is the plain rounds. When it ends above the lower bound on a small graph
    (SMALL_RAISE, SMALL_NODES), or takes more than one round on any graph, other ways are
    tried within the same work bound and the fewest edges kept (`candidates`), until one
    reaches the lower bound."""
    degrees = edges.degrees()
    best, spent = build(edges, target_k, Strategy(), 0)
    large = degrees.size > SMALL_NODES
    if not best.tried or (large and best.added is not None and best.rounds <= 1):
        return best
    bound = edges_lower_bound(degrees, target_k)
    raise_ = int((optimal_degrees(degrees, target_k) - degrees).sum())
    small = not large and raise_ <= SMALL_RAISE
    if best.added is not None and (len(best.added) <= bound or (not small and best.rounds <= 1)):
        return best
    limit = min(CONSTRUCT_MAX_WORK, spent + SMALL_MAX_WORK) if small else CONSTRUCT_MAX_WORK
    for strategy in candidates(degrees.size, small=small):
        found, spent = build(edges, target_k, strategy, spent, limit)
        if found.added is not None and (best.added is None or len(found.added) < len(best.added)):
            best = found
        if spent > limit or (best.added is not None and len(best.added) <= bound):
            break
    return best


@dataclass(frozen=True)
class Strategy:
    """One way to build the supergraph; `anonymise_graph` keeps the fewest edges of several."""

    order: np.ndarray | None = None  # equal degrees take the DP's places in this node order
    probes: int = 0  # Liu–Terzi's probing: the p lowest degrees raised by one before the DP
    upward: bool = False  # forced spare partners from the highest degrees
    pairs_only: bool = False  # one round, raised nodes joined only to one another, the odd
    # unit given to the smallest odd class: the greedy that this module replaced
    greedy: bool = False  # the first round's sequence is Liu–Terzi's greedy one


def candidates(n: int, *, small: bool) -> Iterator[Strategy]:
    """The other ways. On a small graph first the greedy this module replaced (Liu–Terzi's
    greedy sequence, raised nodes joined only to one another, probing p = 0, 1, 2, 4, … ≤ n),
    so that the result is never worse than it was; on every graph forced partners from the
    top and probing; on a small graph then the rounds from the greedy sequence and TIE_ORDERS
    seeded orders of the nodes of equal degree (which of three nodes of degree 3 is raised
    decides whether its new partners can move up together: the notes' graph)."""
    probes = 0
    while small and probes <= n:
        yield Strategy(probes=probes, pairs_only=True, greedy=True)
        probes = 2 * probes or 1
    yield Strategy(upward=True)
    yield from (Strategy(probes=p) for p in (1, 2, 4, 8))
    if not small:
        return
    yield Strategy(greedy=True)
    rng = np.random.default_rng(0)  # orders of equal-degree nodes to try, not noise: a fixed
    for _ in range(TIE_ORDERS):  # seed keeps the anonymisation reproducible
        order = rng.permutation(n)
        yield Strategy(order=order)
        yield Strategy(order=order, greedy=True)


def build(
    edges: EdgeList,
    target_k: int,
    strategy: Strategy,
    spent: int,
    limit: int | None = None,
) -> tuple[Anonymised, int]:
    """The rounds under one strategy, the work `spent` so far carried on (None: over the
    `limit`, more than MAX_ROUNDS, or a pairs-only round left a raise short)."""
    limit = CONSTRUCT_MAX_WORK if limit is None else limit
    original = edges.degrees()
    order = np.arange(original.size) if strategy.order is None else strategy.order
    degrees = original.copy()
    probed = degrees.copy()
    probed[order[np.argsort(degrees[order], kind="stable")[: strategy.probes]]] += 1
    added: list[tuple[int, int]] = []
    for rounds in range(MAX_ROUNDS + 1):
        sequence = greedy_degrees if strategy.greedy and rounds == 0 else optimal_degrees
        target = np.empty_like(degrees)
        target[order] = sequence((probed if rounds == 0 else degrees)[order], target_k)
        if strategy.pairs_only:
            target = even_raise(probed, target)
        if (target == degrees).all():
            return Anonymised(degrees, added, rounds), spent
        raises = target - degrees
        spent += construct_work(int(np.count_nonzero(raises)), int(raises.sum()))
        if spent > limit or rounds == MAX_ROUNDS or (strategy.pairs_only and rounds):
            return Anonymised(original, None, rounds, tried=rounds > 0), spent
        new = one_round(edges, degrees, target, target_k, added, strategy)
        added += new
        degrees += np.bincount(np.array(new, dtype=np.int64).ravel(), minlength=degrees.size)
    raise InternalError("unreachable: the loop returns by its last round")
