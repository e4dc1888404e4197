"""CONFIDENTIAL: the optimal k-anonymous degree sequence (Liu & Terzi, SIGMOD 2008) and the
lower bound it gives on the edges any k-degree anonymisation by added edges needs.

Sorted from the largest, d₁ ≥ d₂ ≥ … ≥ dₙ, a k-anonymous sequence that only raises degrees is
cut into runs of at least k consecutive nodes, each raised to its run's first (largest)
degree; the cheapest cut (least total raise, L1) is Liu–Terzi's dynamic programme

    C(t) = min over i ≤ t − k of C(i) + (t − i)·dᵢ − (Pₜ − Pᵢ),   Pₜ = d₁ + … + dₜ.

For a fixed t the candidate i is the line y = dᵢ·x + (C(i) + Pᵢ − i·dᵢ) at x = t. The slopes dᵢ
only fall as i grows and x = t only grows, so a monotone lower hull of the lines answers every
t in O(1) amortised (the "convex hull trick"): O(n) in all, where the textbook's O(n²), or
O(n·k) with runs shorter than 2k, took minutes at n = 200,000 and k = 20,000.

Every supergraph's degrees are such a sequence and each added edge raises two degrees, so no
k-degree anonymisation adds fewer than ⌈C(n)/2⌉ edges (`sequence_bound`). That bound counts
every raise as half an edge, as if the raised nodes could all be joined to one another; on a
graph with hubs they cannot, and `top_class_bound` is tighter there (Barabási–Albert graphs
of 10,000 nodes at k = 20: 1.37× and 1.44× the first). `edges_lower_bound` is the larger.
"""

from __future__ import annotations

import numpy as np

from dprelease.errors import DataError


def optimal_degrees(degrees: np.ndarray, target_k: int) -> np.ndarray:
    """The k-anonymous sequence of least total raise (by node id; each ≥ its degree)."""
    n = degrees.size
    if target_k > n:
        raise DataError(
            f"k = {target_k} is more than the graph's nodes ({n:,}); no degree can be shared by "
            "that many: choose a k of at most the number of nodes."
        )
    order = np.argsort(-degrees, kind="stable")
    d = degrees[order].tolist()
    prefix = [0, *np.cumsum(degrees[order]).tolist()]
    best: list[int | None] = [0] + [None] * n  # C(t); None: no cut of the first t nodes
    start = [0] * (n + 1)  # the first node of the last run in C(t)'s cut
    hull: list[tuple[int, int, int]] = []  # (slope, intercept, i), slopes falling
    head = 0
    for t in range(target_k, n + 1):
        i = t - target_k
        cost = best[i]
        if cost is not None:
            _add_line(hull, head, (d[i], cost + prefix[i] - i * d[i], i))
            head = min(head, len(hull) - 1)
        while head + 1 < len(hull) and _at(hull[head + 1], t) <= _at(hull[head], t):
            head += 1
        best[t] = _at(hull[head], t) - prefix[t]
        start[t] = hull[head][2]
    sorted_target = np.empty(n, dtype=np.int64)
    t = n
    while t > 0:
        sorted_target[start[t] : t] = d[start[t]]
        t = start[t]
    target = np.empty(n, dtype=np.int64)
    target[order] = sorted_target
    return target


def _at(line: tuple[int, int, int], x: int) -> int:
    return line[0] * x + line[1]


def _add_line(hull: list[tuple[int, int, int]], head: int, line: tuple[int, int, int]) -> None:
    """Append a line of the least slope so far, dropping the lines it makes useless."""
    if len(hull) > head and hull[-1][0] == line[0]:
        if hull[-1][1] <= line[1]:
            return  # parallel and never lower
        hull.pop()
    while len(hull) - head >= 2:
        (m1, b1, _), (m2, b2, _) = hull[-2], hull[-1]
        m3, b3, _ = line
        # the middle line is useless when the new one meets the first no later than it does
        if (b3 - b1) * (m1 - m2) > (b2 - b1) * (m1 - m3):
            break
        hull.pop()
    hull.append(line)


def sequence_bound(degrees: np.ndarray, target_k: int) -> int:
    """⌈least total raise / 2⌉: no k-degree anonymisation by added edges needs fewer edges."""
    return (int((optimal_degrees(degrees, target_k) - degrees).sum()) + 1) // 2


def top_class_bound(degrees: np.ndarray, target_k: int) -> int:
    """min over s ≥ k of max(R(s) − s(s − 1)/2, R(s)/2), R(s) = Σ_{i ≤ s} (d₁ − dᵢ) (sorted
    from the largest).

    In the anonymised graph the node of the largest degree d₁ shares its final degree D ≥ d₁
    with a class S of s ≥ k nodes. Their raises D − d_u sum to at least R(s), the s smallest
    raises to d₁. An added edge serves two of them only when both ends are in S, and at most
    s(s − 1)/2 edges fit there, so the added edges number at least R(s) − s(s − 1)/2, and
    at least R(s)/2 (which bounds a large class).
    """
    d = np.sort(degrees)[::-1].astype(np.int64)
    sizes = np.arange(target_k, d.size + 1, dtype=np.int64)
    raises = sizes * d[0] - np.cumsum(d)[sizes - 1]
    bound = np.maximum(raises - sizes * (sizes - 1) // 2, (raises + 1) // 2)
    return max(0, int(bound.min()))


def edges_lower_bound(degrees: np.ndarray, target_k: int) -> int:
    """The larger of the two bounds: no anonymisation by added edges adds fewer edges."""
    return max(sequence_bound(degrees, target_k), top_class_bound(degrees, target_k))


def anonymise_degrees(degrees: np.ndarray, target_k: int) -> np.ndarray:
    """The optimal sequence with an even total raise (the degree sequence a graph can have)."""
    return even_raise(degrees, optimal_degrees(degrees, target_k))


def even_raise(degrees: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Raise the smallest odd-sized group by one when the degrees' sum is odd (an edge adds 2
    to it, so the anonymised sum must be even, like the graph's own)."""
    if int(target.sum()) % 2 == 0:
        return target
    values, sizes = np.unique(target, return_counts=True)
    odd = [(int(s), int(v)) for v, s in zip(values, sizes, strict=True) if s % 2 == 1]
    # The sum is odd, so some group has an odd size; stay below n − 1 where one can.
    odd = [(s, v) for s, v in odd if v + 1 <= degrees.size - 1] or odd
    _, value = min(odd)
    raised = target.copy()
    raised[target == value] += 1
    return raised


def greedy_degrees(degrees: np.ndarray, target_k: int) -> np.ndarray:
    """Liu–Terzi's greedy k-anonymous sequence (by node id): after a run's first k nodes
    (sorted from the largest), the next joins it when its raise to the run's degree plus the
    cost of the k after it as a run is no more than the cost of starting a run at it. Not
    optimal, but its runs differ from the DP's, and on a small graph a run the DP does not
    choose can be the one whose edges exist (`supergraph.candidates`)."""
    n = degrees.size
    if target_k > n:
        return optimal_degrees(degrees, target_k)  # its one-line error
    order = np.argsort(-degrees, kind="stable")
    d = degrees[order].tolist()
    prefix: list[int] = [0, *np.cumsum(degrees[order]).tolist()]

    def cost(i: int, j: int, top: int) -> int:  # raise sorted places i … j − 1 to `top`
        return (j - i) * top - (prefix[j] - prefix[i])

    starts, place = [0], target_k
    while n - place >= target_k:
        join = d[starts[-1]] - d[place]
        if n - place > target_k:  # the k after it as a run
            join += cost(place + 1, place + 1 + target_k, d[place + 1])
        else:  # the rest cannot be a run: they join this one
            join += cost(place + 1, n, d[starts[-1]])
        if join > cost(place, place + target_k, d[place]):
            starts.append(place)
            place += target_k
        else:
            place += 1
    sorted_target = np.empty(n, dtype=np.int64)
    for start, stop in zip(starts, [*starts[1:], n], strict=True):
        sorted_target[start:stop] = d[start]
    target = np.empty(n, dtype=np.int64)
    target[order] = sorted_target
    return target
