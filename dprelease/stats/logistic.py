"""Logistic regression by objective perturbation (Chaudhuri, Monteleoni & Sarwate, JMLR 2011).

Conditions of the theorem, and how the release meets them:

- bounded rows, ‖v‖ ≤ 1: each x is clamped into its bounds, mapped onto [−1, 1]
  (u = (x − c)/h) and v = (1, u₁, …, u_d)/√(d+1) (the 1 gives the intercept);
- labels s ∈ {−1, +1}: y is clamped into its bounds and rounded to the nearer end (upper: +1);
- the loss ℓ(z) = ln(1 + e^{−z}), z = s·wᵀv, is convex and twice differentiable with
  |ℓ′| ≤ 1 and 0 ≤ ℓ″ ≤ c = 1/4;
- the regulariser Λ/2·‖w‖² is Λ-strongly convex. The objective is written unnormalised,

      F_D(w) = Σ_{i∈D} ℓ(s_i wᵀv_i) + Λ/2·‖w‖² + bᵀw,

  so that Λ (CMS's n·λ) is public: the row count n never enters, and add/remove neighbours
  (n changes) are covered as well as replace. Λ is the plan's `regularization` when it sets
  one other than the default; by default it is chosen from ε and k alone
  (`logistic_penalty.automatic_regularization`: Λ ≈ 0.63 at ε = 1, 0.097 at ε = 4, 1.2e−4 at
  ε = 100 for k = m = 1), public values only, so the proof below holds for it unchanged.

Why it is ε-DP. F_D is strictly convex, so w = argmin F_D exists, is unique and determines
b = −∇G_D(w) (G_D = F_D without bᵀw): b ↦ w is a bijection, and the density of the output is
p_D(w) = ν(b_D(w))·|det ∇²G_D(w)|. For neighbours differing in one privacy unit of at most m
rows (k = m under add/remove, 2m under replace): b_D(w) − b_D′(w) is a sum of at most k
gradients ℓ′·s·v, so ‖b_D − b_D′‖ ≤ k. The Hessians are ∇²G_D = A + P and ∇²G_D′ = A + P′,
A ⪰ ΛI the part the two share (the common rows and ΛI), P and P′ sums of at most m rank-one
terms ℓ″vvᵀ each (the unit's rows in D, in D′; one of them is 0 under add/remove). Adding
one such term to a matrix ⪰ ΛI multiplies its determinant by 1 + ℓ″·vᵀ(·)⁻¹v ∈ [1, 1 + c/Λ],
so det(A + P)/det A ∈ [1, (1 + c/Λ)^m], the same for P′, and the ratio of the two determinants
is within (1 + c/Λ)^{±m}, under replace as under add/remove (CMS's proof, for replace with
m = 1, bounds the rank-two difference P − P′ as a whole and gets (1 + c/Λ)²: this is the same
proof with the common part A factored out first). With ν(b) ∝ exp(−(ε′/k)·‖b‖):

    ln p_D(w)/p_D′(w) ≤ (ε′/k)·k + m·ln(1 + c/Λ) = ε   when ε′ = ε − m·ln(1 + c/Λ).

The ε′ adjustment: if ε′ ≤ 0 (the plan's Λ too small for ε), the regulariser is raised to
Λ′ = c/(e^{ε/(2m)} − 1) so that m·ln(1 + c/Λ′) = ε/2, and ε′ = ε/2 (CMS's Δ, with their
e^{ε/4} for replace becoming e^{ε/2} by the bound above). b is drawn as
‖b‖ ~ Gamma(shape d+1, scale k/ε′) times a uniform direction. `tests/unit/stats/
test_logistic_penalty.py` checks the inequality on the exact density (`log_density`).

The intercept is penalised like every other coefficient, and must be. Dropping its
penalty (as scikit-learn does, and diffprivlib on top of it) leaves ∇²G_D without a floor in
the direction of the constant coordinate: where every row's ℓ″ is near 0 (any w far enough out,
which some b always produces) the rank-one term of the extra row changes the determinant by an
unbounded factor, and no ε covers the ratio. What the proof does allow is a diagonal
regulariser diag(Λ₀, Λ₁, …) with c·max_v vᵀdiag(Λ)⁻¹v in place of c/Λ; moving penalty from the
slopes to the intercept pays off only when the intercept is the larger coefficient, which is
not known without the data, so the penalty stays isotropic. Its shrinkage is what the chosen
Λ removes instead: at n = 100,000 rows with an intercept of −2.4, the fit without noise moved
it by 0.0021 at Λ = 1 and by 2·10⁻⁷ at ε = 100 (k = 1). The release's `regularization_note`
states Λ and the pull Λ‖w‖ against the noise's E‖b‖, from the released w (post-processing).

Accounting: ε-DP; under zcdp a share ρ buys ε = √(2ρ) (ε-DP implies ε²/2-zCDP); no δ.

Exactness. Unlike the integer moments of linear regression, this mechanism is continuous: the
theorem holds for a real-valued b and the exact minimiser, and no exact sampler or solver
exists for it. What the release does instead, and why it stays sound in practice: (1) b comes
from the OS CSPRNG (`os.urandom`): ‖b‖ as −(k/ε′)·Σ ln U_i over d+1 uniforms (a Gamma of whole
shape is a sum of exponentials), its direction from normalised Box–Muller normals, every U with
53 random bits; no seedable generator is involved. (2) Newton's method runs until its step is
below 1e−12·(1 + ‖w‖): near the minimiser the Newton step is the distance to it, to first
order, and the convergence is quadratic, so the iterate is at the floating-point floor. (3) The
coefficients are snapped to multiples of 2⁻²⁰ on the scaled axis (Mironov's remedy for
floating-point noise: the low-order bits that his attack reads are not released). The released
value differs from the snapped exact minimiser only when that lies within the solver's error (≈
1e−12) of a rounding boundary, an event of probability about 2·(d+1)·1e−12·2²⁰ ≈ 1e−5 or less;
no δ is claimed for it. The empirical audit (tests/statistical) checks the stated ε on
neighbouring data sets.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dprelease.plan.model_spec import DEFAULT_REGULARIZATION, RegressionSpec
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.logistic_penalty import automatic_regularization
from dprelease.stats.moments import Scaling, complete_rows

CURVATURE = 0.25  # c: the logistic loss's second derivative is at most 1/4
SNAP = 2.0**-20  # released coefficients on the scaled axis are multiples of this
STEP_TOLERANCE = 1e-12
MAX_NEWTON = 100
UNREGULARISED = 1e-9  # Λ of the Preview's reference fit: no shrinkage, still strictly convex

Uniforms = Callable[[int], np.ndarray]  # size -> uniforms in (0, 1]


def secure_uniforms(size: int) -> np.ndarray:
    """Uniforms in (0, 1] with 53 bits each, from the OS CSPRNG."""
    words = np.frombuffer(os.urandom(8 * size), dtype=np.uint64) >> np.uint64(11)
    result: np.ndarray = (words.astype(np.float64) + 1.0) / 2.0**53
    return result


@dataclass(frozen=True)
class LogisticMechanism:
    """Objective perturbation calibrated to a pure ε (see the module docstring)."""

    spec: RegressionSpec
    context: StatContext
    epsilon: float  # the mechanism's whole ε
    regularization: float  # Λ′ used: the plan's Λ (raised if ε is too small) or the chosen one
    epsilon_noise: float  # ε′: the part b's density pays for
    cost: Share

    @property
    def distance(self) -> int:
        """k: rows one unit adds and removes together (m or 2m)."""
        return self.context.symmetric_distance

    @property
    def rows(self) -> int:
        """m: rows of one privacy unit (each moves the Hessian's determinant)."""
        return self.context.max_rows

    @property
    def rate(self) -> float:
        """β of ν(b) ∝ exp(−β‖b‖): ε′/k."""
        return self.epsilon_noise / self.distance

    @property
    def dimension(self) -> int:
        return len(self.spec.x) + 1

    @property
    def automatic(self) -> bool:
        """Whether Λ was chosen from ε (the plan left `regularization` at its default)."""
        return self.spec.regularization == DEFAULT_REGULARIZATION

    @property
    def b_norm_mean(self) -> float:
        """E‖b‖ = (d+1)·k/ε′."""
        return self.dimension / self.rate


def calibrate_logistic(spec: RegressionSpec, share: Share, ctx: StatContext) -> LogisticMechanism:
    """Λ′ and ε′ for the share's ε (the ε′ adjustment of the module docstring); Λ chosen from ε,
    k and m unless the plan sets its own."""
    epsilon, lam = share.pure_epsilon(), spec.regularization
    k, m = ctx.symmetric_distance, ctx.max_rows
    if lam == DEFAULT_REGULARIZATION:
        lam = automatic_regularization(epsilon, k, m, CURVATURE)
    adjusted = epsilon - m * math.log1p(CURVATURE / lam)
    if adjusted <= 0:
        lam = CURVATURE / math.expm1(epsilon / (2 * m))
        adjusted = epsilon / 2
        # Λ′ rounded up and ε′ down, so the two parts never add up to more than ε
        while m * math.log1p(CURVATURE / lam) > epsilon / 2:
            lam = math.nextafter(lam, math.inf)
    adjusted = math.nextafter(adjusted, 0.0)
    return LogisticMechanism(spec, ctx, epsilon, lam, adjusted, share)


def design(values: np.ndarray, spec: RegressionSpec) -> tuple[np.ndarray, np.ndarray]:
    """CONFIDENTIAL: (V, s): rows v = (1, u)/√(d+1) with ‖v‖ ≤ 1, labels ±1."""
    rows = complete_rows(values)
    scaling = Scaling.of(spec.bounds)
    clamped = np.clip(rows, scaling.lo, scaling.hi)
    u = (clamped[:, :-1] - scaling.centre[:-1]) / scaling.half[:-1]
    v = np.hstack([np.ones((u.shape[0], 1)), u]) / math.sqrt(u.shape[1] + 1)
    labels = np.where(clamped[:, -1] >= scaling.centre[-1], 1.0, -1.0)
    return v, labels


def draw_b(mechanism: LogisticMechanism, uniforms: Uniforms) -> np.ndarray:
    """b with density ∝ exp(−β‖b‖): Gamma(d+1, 1/β) norm, uniform direction."""
    dim = mechanism.dimension
    norm = -float(np.sum(np.log(uniforms(dim)))) / mechanism.rate
    u1, u2 = uniforms(dim), uniforms(dim)
    normals = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * math.pi * u2)
    length = float(np.linalg.norm(normals))
    if length == 0.0:  # probability 0; draw again rather than divide by zero
        return draw_b(mechanism, uniforms)
    result: np.ndarray = norm * normals / length
    return result


def _objective(w: np.ndarray, v: np.ndarray, s: np.ndarray, lam: float, b: np.ndarray) -> float:
    return float(np.logaddexp(0.0, -s * (v @ w)).sum() + lam / 2 * w @ w + b @ w)


def gradient_hessian(
    w: np.ndarray, v: np.ndarray, s: np.ndarray, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """∇G and ∇²G of G(w) = Σ ℓ(s wᵀv) + Λ/2‖w‖² (without the bᵀw term)."""
    z = s * (v @ w)
    p = 0.5 * (1.0 - np.tanh(z / 2))  # σ(−z), stable
    grad = -(v.T @ (s * p)) + lam * w
    hess = (v * (p * (1.0 - p))[:, None]).T @ v + lam * np.eye(w.size)
    return grad, hess


def minimise(
    v: np.ndarray, s: np.ndarray, lam: float, b: np.ndarray, start: np.ndarray | None = None
) -> np.ndarray:
    """argmin F by damped Newton (F is Λ-strongly convex and smooth: it converges fast)."""
    w = np.zeros(b.size) if start is None else start.copy()
    current = _objective(w, v, s, lam, b)
    for _ in range(MAX_NEWTON):
        grad, hess = gradient_hessian(w, v, s, lam)
        grad = grad + b
        step = np.linalg.solve(hess, grad)
        if float(np.linalg.norm(step)) <= STEP_TOLERANCE * (1.0 + float(np.linalg.norm(w))):
            return w - step
        t = 1.0
        while True:
            trial = w - t * step
            value = _objective(trial, v, s, lam, b)
            slack = 1e-12 * (abs(current) + 1.0)  # objective differences below float resolution
            if value <= current - 1e-4 * t * float(grad @ step) + slack or t < 1e-10:
                break
            t /= 2
        w, current = trial, value
    return w


def to_original(w: np.ndarray, spec: RegressionSpec) -> np.ndarray:
    """(intercept, β₁…β_d) in log-odds per unit of each x, from w on the scaled axis."""
    scaling = Scaling.of(spec.bounds)
    root = math.sqrt(w.size)
    cx, hx = scaling.centre[:-1], scaling.half[:-1]
    slopes = w[1:] / (hx * root)
    intercept = (w[0] - float(np.sum(w[1:] * cx / hx))) / root
    return np.concatenate([[intercept], slopes])


def to_scaled(coefficients: np.ndarray, spec: RegressionSpec) -> np.ndarray:
    """w on the scaled axis from released coefficients (the inverse of `to_original`)."""
    scaling = Scaling.of(spec.bounds)
    root = math.sqrt(coefficients.size)
    cx, hx = scaling.centre[:-1], scaling.half[:-1]
    slopes = coefficients[1:] * hx * root
    first = root * coefficients[0] + float(np.sum(slopes * cx / hx))
    return np.concatenate([[first], slopes])


def regularization_pull(coefficients: np.ndarray, mechanism: LogisticMechanism) -> float:
    """Λ‖w‖ / E‖b‖ from the released coefficients (post-processing: public values only).

    To first order the release's error is −H⁻¹(Λw + b): the regulariser's shrinkage and the
    noise pass through the same H⁻¹, so this ratio estimates the shrinkage's size as a
    fraction of the noise's (within H's condition number), without the data."""
    w = to_scaled(np.asarray(coefficients, dtype=float), mechanism.spec)
    return mechanism.regularization * float(np.linalg.norm(w)) / mechanism.b_norm_mean


def regularization_note(mechanism: object, coefficients: np.ndarray) -> str | None:
    """The line the dashboard shows under a logistic regression's coefficients (None for any
    other mechanism): Λ, how it was chosen, and its pull against the noise."""
    if not isinstance(mechanism, LogisticMechanism):
        return None
    how = "chosen from ε" if mechanism.automatic else "set by the plan"
    pull = regularization_pull(coefficients.ravel(), mechanism)
    return (
        f"Regularisation Λ = {mechanism.regularization:.3g} ({how}). It shrinks the "
        f"coefficients toward 0 by about {pull:.1%} of the noise's effect on them (Λ‖w‖ "
        f"against E‖b‖ = {mechanism.b_norm_mean:.3g}, from the released values)."
    )


def snap(w: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.rint(w / SNAP) * SNAP
    return result


def release_logistic(
    values: np.ndarray, mechanism: LogisticMechanism, uniforms: Uniforms = secure_uniforms
) -> np.ndarray:
    """The released coefficients (intercept first, log-odds units); secure by default."""
    v, s = design(values, mechanism.spec)
    w = minimise(v, s, mechanism.regularization, draw_b(mechanism, uniforms))
    return to_original(snap(w), mechanism.spec)


def numpy_uniforms(rng: np.random.Generator) -> Uniforms:
    """PREVIEW only: uniforms in (0, 1] from a seedable generator."""

    def draw(size: int) -> np.ndarray:
        result: np.ndarray = 1.0 - rng.random(size)
        return result

    return draw


def preview_logistic(
    values: np.ndarray, mechanism: LogisticMechanism, rng: np.random.Generator
) -> np.ndarray:
    """PREVIEW only (numpy noise)."""
    return release_logistic(values, mechanism, numpy_uniforms(rng))


def log_density(w: np.ndarray, v: np.ndarray, s: np.ndarray, mechanism: LogisticMechanism) -> float:
    """ln p_D(w) up to a constant that does not depend on D: −β‖b_D(w)‖ + ln det ∇²G_D(w).
    The proof of the module docstring, made executable: the audit's privacy loss."""
    grad, hess = gradient_hessian(w, v, s, mechanism.regularization)
    _, logdet = np.linalg.slogdet(hess)
    return -mechanism.rate * float(np.linalg.norm(grad)) + float(logdet)


def exact_fit(values: np.ndarray, mechanism: LogisticMechanism) -> np.ndarray:
    """CONFIDENTIAL (Preview only): the regularised fit without noise (b = 0)."""
    v, s = design(values, mechanism.spec)
    return to_original(
        minimise(v, s, mechanism.regularization, np.zeros(v.shape[1])), mechanism.spec
    )


def simulate_logistic_error(
    values: np.ndarray, mechanism: LogisticMechanism, rng: np.random.Generator, draws: int = 50
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CONFIDENTIAL (Preview only): RMSE, bias and the central half-width at 95% of each
    coefficient against the fit without noise and without regularisation (Λ → 0: its bias
    includes Λ's shrinkage), by redrawing b (warm-started Newton)."""
    v, s = design(values, mechanism.spec)
    lam = mechanism.regularization
    base = minimise(v, s, lam, np.zeros(v.shape[1]))
    truth = to_original(minimise(v, s, UNREGULARISED, np.zeros(v.shape[1]), base), mechanism.spec)
    draw = numpy_uniforms(rng)
    errors = np.array(
        [
            to_original(snap(minimise(v, s, lam, draw_b(mechanism, draw), base)), mechanism.spec)
            - truth
            for _ in range(draws)
        ]
    )
    moe = np.quantile(np.abs(errors), 0.95, axis=0)
    return np.sqrt((errors**2).mean(axis=0)), errors.mean(axis=0), moe
