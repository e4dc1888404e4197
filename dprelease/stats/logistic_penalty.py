"""The regulariser Λ of objective perturbation chosen from ε (issue 38.2).

A fixed Λ = 1 put a floor under logistic regression's error: from ε ≈ 4 upward the
regulariser's shrinkage, not the noise, was most of it. The theorem (module docstring of
`dprelease.stats.logistic`) holds for every public Λ > 0 with ε′ = ε − m·ln(1 + c/Λ) > 0: a
smaller Λ costs only a logarithm of ε. The rule picks Λ by balancing what each part does to w.

On the scaled axis the release is w = argmin Σ ℓ + Λ/2·‖w‖² + bᵀw; to first order its error
against the unregularised fit ŵ is −H⁻¹(Λŵ + b), H the data's Hessian. The two terms pass
through the same H⁻¹, so the row count n (in H) scales both alike: the best Λ does not depend
on n, and the rule needs no count (n is private here; nothing about it is used). What is left
to balance is the pull Λ‖ŵ‖ against the noise E‖b‖ = (d+1)·k/ε′. With ‖ŵ‖ ≈ (d+1)·β_typ
(v = (1, u)/√(d+1) makes w = √(d+1)·β, and ‖β‖ ≈ √(d+1)·β_typ for d+1 coefficients of typical
size β_typ in log-odds per half-range of each x), d+1 cancels and Λ minimises

    g(Λ) = Λ·β_typ + k/ε′(Λ),     ε′(Λ) = ε − m·ln(1 + c/Λ),

a public function of ε, k and m alone (not of n, d or the data). With x = c/Λ, g′ = 0 is
√(k·m)·x = √(c·β_typ)·√(1+x)·(ε − m·ln(1+x)): the left side over the right rises from 0 to ∞
on 0 < x < e^{ε/m} − 1, so the root is unique and bisection on ln x finds it.

What it gives (k = m = 1): Λ ≈ 0.63 at ε = 1 (a third of ε on the determinant, the optimum for
every small ε: Λ ∝ 1/ε there), 0.097 at ε = 4, 0.018 at ε = 10, 1.2e−4 at ε = 100 (Λ ∝ k²/ε²
as ε grows). β_typ = 1 was calibrated by simulation on generated rows (n = 100,000, 1, 3 and 8
features uniform on [−1, 1], intercept −2.4, slopes up to 1): the median error of the release
against the unregularised fit, over the share f of ε spent on the determinant, was lowest for
f between 0.2 and 0.5 at ε = 1, 4 and 10 for every d tried, and flat in f at ε = 100; β_typ = 1
gives f = 1/3 at small ε (β_typ = 0.5 and 2 give 0.26 and 0.41: the choice is not sharp).
"""

from __future__ import annotations

import math

NOMINAL_COEFFICIENT = 1.0  # β_typ: a typical coefficient's size on the scaled axis (log-odds)
BISECTIONS = 200


def automatic_regularization(epsilon: float, distance: int, rows: int, curvature: float) -> float:
    """Λ minimising Λ·β_typ + k/ε′(Λ) (module docstring; k = `distance`, m = `rows`); ε′(Λ) > 0
    at the result, up to rounding (the caller rounds Λ and ε′ conservatively)."""
    k, m, target = float(distance), float(rows), math.sqrt(curvature * NOMINAL_COEFFICIENT)
    ratio = epsilon / m
    # ln x_max = ln(e^{ε/k} − 1), computed without overflow for large ε/k
    top = ratio + math.log(-math.expm1(-ratio))

    def rises_past_target(t: float) -> bool:
        log1p_x = t + math.log1p(math.exp(-t)) if t > 0 else math.log1p(math.exp(t))
        rest = epsilon - m * log1p_x
        if rest <= 0:
            return True
        # √(k·m)·x / (√(1+x)·rest), in logs
        return t + math.log(k * m) / 2 - log1p_x / 2 - math.log(rest) > math.log(target)

    low, high = -abs(top) - 200.0, top  # the root lies between, for every ε / k
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if rises_past_target(middle):
            high = middle
        else:
            low = middle
    return curvature * math.exp(-low)  # Λ = c/x at the lower end: ε′ stays > 0
