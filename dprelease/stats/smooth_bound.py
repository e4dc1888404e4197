"""The β-smooth upper bound on a quantile's local sensitivity (Nissim–Raskhodnikova–Smith 2007).

The q-quantile of a cell's n values is the order statistic f(D) = x_(r), r = max(1, ⌈q·n⌉),
of the values clamped into the public range [lo, hi], sorted and padded: x_(i) = lo for i ≤ 0
and hi for i ≥ n + 1.

The bound (issue 38.3: the textbook one; before, every window was twice as wide). Let

    B(w) = max over a ∈ [r − w, r] of x_(a+w) − x_(a)

(the widest gap between order statistics w places apart whose window holds r), and for a unit
of d rows (d = m under add/remove, 2m under replace, m = max_rows)

    S(D) = max over t ≥ 0 of e^{−βt} · B((t + 1)·d).

For d = 1 and the median this is NRS's S*(x) = max_k e^{−kβ}·max_{t=0..k+1}(x_{m+t} −
x_{m+t−k−1}) (their windows of k + 1 places holding m). Proof that S is a β-smooth upper bound
on the local sensitivity of a unit, under add/remove of rows and this rank rule:

1. One row added: the new order statistics satisfy y_(i) ∈ [x_(i−1), x_(i)] (padding
   included), and the rank moves to r′ ∈ {r, r + 1} (⌈q(n+1)⌉ − ⌈qn⌉ ∈ {0, 1}, max(1, ·)
   keeps it). A window [a, a + w] ∋ r of D gives x_(a+w) − x_(a) ≤ y_(a+w+1) − y_(a), a window
   of w + 1 places holding r′; a window [a, a + w] ∋ r′ of D′ gives y_(a+w) − y_(a) ≤
   x_(a+w) − x_(a−1), w + 1 places holding r. A removed row is the same pair read backwards.
   So B_D(w) ≤ B_D′(w + 1) for one-row neighbours, and B_D(w) ≤ B_D′(w + d) for a unit's (B
   grows with w).
2. Smooth: S(D) ≤ max_t e^{−βt} B_D′((t + 2)d) = e^β max_t e^{−β(t+1)} B_D′((t + 2)d) ≤
   e^β S(D′).
3. Upper bound: a unit's neighbour D′ (a rows added, b removed, a + b ≤ d) has y_(i) ∈
   [x_(i−a), x_(i+b)] and r′ ∈ [r − b, r + a], so f(D′) ∈ [x_(r−d), x_(r+d)] and
   |f(D) − f(D′)| ≤ B_D(d) ≤ S(D). (The same holds from D′, so |f(D) − f(D′)| ≤ min(S, S′),
   which the noise's proof in `smooth_quantile` uses.)

The old bound used windows of 2w places (B(w) over [r − 2w, r]): valid, and equal to this S at
2d, but 1.5–2.1× larger on lognormal cells of 100,000 and 1 M rows and 1.4–62× on cells of
600–2,400 rows (ε = 1 and 0.1), where its windows reached the whole range twice as soon
(`python bench/bench_smooth_sensitivity.py --ratio`).

It is computed exactly: sort (O(n log n)), then the largest e^{−βτ}·(x_(j) − x_(i)) over the
pairs i ≤ r ≤ j, τ(L) = max(0, ⌈L/d⌉ − 1) the smallest t whose windows hold a pair L = j − i
places apart (`smooth_sensitivity`: O(d·n log n), issue 35; the old scan over t cost O(1/β²)).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

FAST_PERIOD_LIMIT = 32  # d up to this: the pairs algorithm (d² monotone searches)


def padded(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """lo, the values clamped into [lo, hi] and sorted, hi: x_(0) … x_(n+1)."""
    inside = np.sort(np.clip(values, lo, hi))
    return np.concatenate(([lo], inside, [hi]))


def rank(q: Fraction, n: int) -> int:
    """r = max(1, ⌈q·n⌉), exactly."""
    return max(1, math.ceil(q * n))


def order_statistic(x: np.ndarray, q: Fraction) -> tuple[float, int]:
    """x_(r) and r for the padded sorted values (CONFIDENTIAL)."""
    r = rank(q, x.size - 2)
    return float(x[min(r, x.size - 1)]), r


def window_gap(x: np.ndarray, r: int, width: int) -> float:
    """B(w): the widest gap x_(a+w) − x_(a) over a ∈ [r − w, r] (indices beyond the padding
    read as its ends), the bound on the local sensitivity at distance t for w = (t + 1)·d."""
    last = x.size - 1
    starts = np.arange(r - width, r + 1)
    gaps = x[np.clip(starts + width, 0, last)] - x[np.clip(starts, 0, last)]
    return float(gaps.max())


def smooth_sensitivity(x: np.ndarray, r: int, beta: float, steps: int) -> float:
    """S = max_t e^{−βt} B((t+1)·d) over the padded sorted values x (module docstring).

    B(w) is the widest gap x_(j) − x_(i) with i ≤ r ≤ j and j − i ≤ w, so S is the largest
    e^{−β·τ(j−i)}·(x_(j) − x_(i)) over such pairs, τ(L) = max(0, ⌈L/d⌉ − 1). `_pairs_maximum`
    finds it in O(d·n log n); the scan stays for large d (few t to scan). Both give the same
    float (`_exact_value`)."""
    if steps <= FAST_PERIOD_LIMIT:
        return _pairs_maximum(x, r, beta, steps)
    return _scan(x, r, beta, steps)


def _exact_value(x: np.ndarray, i: np.ndarray, j: np.ndarray, beta: float, period: int) -> float:
    """max over the pairs of e^{−βτ}·(x_j − x_i), computed as the scan does (math.exp(−β·t)
    times the float gap), so that both return the same float."""
    if i.size == 0:
        return 0.0
    t = np.maximum(0, (j - i + period - 1) // period - 1)
    levels, where = np.unique(t, return_inverse=True)
    decay = np.array([math.exp(-beta * int(level)) for level in levels])
    return max(0.0, float((decay[where] * (x[j] - x[i])).max()))


def _pairs_maximum(x: np.ndarray, r: int, beta: float, period: int) -> float:
    """S by pairs. Within one residue class of i and one of j (mod d), τ(j − i) is linear in
    j − i, so log(x_j − x_i) − (β/d)·j is the score to maximise over j for each i; its best j
    never decreases as i grows (log(x_j − x_i) has increasing differences in (i, j)), so
    a divide and conquer over i finds every i's best j, one level at a time (vectorised)."""
    last = x.size - 1
    slope = beta / period
    best_i, best_j = [], []
    for c in range(period):
        rows = np.arange(c, r + 1, period)  # i ≤ r with i ≡ c
        if rows.size == 0:
            continue
        for c2 in range(period):
            first = r + (c2 - r) % period
            cols = np.arange(first, last + 1, period)  # j ≥ r with j ≡ c2
            if cols.size == 0:
                continue
            best_i.append(rows)
            best_j.append(cols[_monotone_argmax(x[rows], x[cols], slope * cols)])
    if not best_i:
        return 0.0
    return _exact_value(x, np.concatenate(best_i), np.concatenate(best_j), beta, period)


def _monotone_argmax(left: np.ndarray, right: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """For each k, the last l maximising log(right[l] − left[k]) − cost[l] (left, right
    sorted; the argmax is monotone in k): divide and conquer, every segment of a level at
    once, O((K + L) log K)."""
    k_count, l_count = left.size, right.size
    out = np.empty(k_count, dtype=np.int64)
    klo, khi = np.array([0]), np.array([k_count - 1])
    llo, lhi = np.array([0]), np.array([l_count - 1])
    with np.errstate(divide="ignore"):
        while klo.size:
            mid = (klo + khi) // 2
            lengths = lhi - llo + 1
            offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            seg = np.repeat(np.arange(mid.size), lengths)
            ls = llo[seg] + np.arange(seg.size) - offsets[seg]
            score = np.log(right[ls] - left[mid[seg]]) - cost[ls]
            top = np.maximum.reduceat(score, offsets)
            hit = np.where(score == top[seg], np.arange(seg.size), -1)
            chosen = ls[np.maximum.reduceat(hit, offsets)]
            out[mid] = chosen
            # children: [klo, mid − 1] searches [llo, chosen]; [mid + 1, khi] [chosen, lhi]
            left_ok, right_ok = klo <= mid - 1, mid + 1 <= khi
            klo, khi, llo, lhi = (
                np.concatenate((klo[left_ok], (mid + 1)[right_ok])),
                np.concatenate(((mid - 1)[left_ok], khi[right_ok])),
                np.concatenate((llo[left_ok], chosen[right_ok])),
                np.concatenate((chosen[left_ok], lhi[right_ok])),
            )
    return out


def _scan(x: np.ndarray, r: int, beta: float, steps: int) -> float:
    """The scan over t (for large d): a term is skipped only when e^{−βt} times the outer
    span x_(r+w) − x_(r−w) (≥ B(w)) cannot beat the running maximum, and the loop ends when
    e^{−βt}(hi − lo) cannot, or once a window spans every value (B = hi − lo: later terms
    only decay)."""
    last = x.size - 1  # index n + 1
    span = float(x[-1] - x[0])
    best, t = 0.0, 0
    while True:
        decay = math.exp(-beta * t)
        if decay * span <= best:
            return best
        w = (t + 1) * steps
        outer = float(x[min(r + w, last)] - x[max(r - w, 0)])
        if decay * outer > best:
            starts = np.arange(r - w, r + 1)
            gaps = x[np.clip(starts + w, 0, last)] - x[np.clip(starts, 0, last)]
            best = max(best, decay * float(gaps.max()))
        if w >= last:  # some window spans x_(0) … x_(n+1): B = hi − lo from here on
            return best
        t += 1


def evenly_spread_bound(n: int, spacing: float, beta: float, steps: int) -> float:
    """S for n values evenly `spacing` apart filling the range (n·spacing = hi − lo): B(w) ≤
    min(w, n)·spacing (equal for windows inside the values), so S = spacing · max_t
    e^{−βt}·min((t + 1)d, n), a unimodal sequence in t whose top lies at the integers next to
    1/β − 1 or to n/d − 1 (the planner's reference cell, `stats.reference`; public)."""
    peak, full = 1 / beta - 1, n / steps - 1
    candidates = {0, *(max(0, int(f(v))) for v in (peak, full) for f in (math.floor, math.ceil))}
    best = max(math.exp(-beta * t) * min((t + 1) * steps, n) for t in candidates)
    return spacing * best
