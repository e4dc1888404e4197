"""`approx` draws discrete Gaussian noise: its strategies and accountant choices, certified.

The strategy (`dprelease.strategy`) prices approx with the continuous analytic Gaussian: the
measurements' shares u_A = Δ₂²/σ_A² fill 1/σ*². The release draws integer noise, so each
σ_A is multiplied by the least common factor c ≥ 1 that the discrete Gaussians' PLD certifies
at the plan's (ε, δ) (`dgauss_pld.certify`). The least-squares error of every published table
is linear in the measurements' variances, so it scales by c² (exact for σ ≥ 3, where the
discrete Gaussian's variance is σ²; below, its variance is less than σ² and the figure is an
upper bound).
"""

from __future__ import annotations

from dataclasses import replace

from dprelease.accounting.accountants.registry import accountant
from dprelease.accounting.auto import AccountantChoice
from dprelease.accounting.dgauss_pld import certify
from dprelease.accounting.mechanisms import DISCRETE_GAUSSIAN, Noise
from dprelease.errors import InternalError
from dprelease.plan.table_spec import Sensitivity
from dprelease.strategy.select import Strategy


def certified_strategy(strategy: Strategy[Noise], sens: Sensitivity) -> Strategy[Noise]:
    """An approx strategy with its measurements' discrete-Gaussian σ's certified; any other
    strategy unchanged."""
    if not accountant(strategy.accounting).priced_as_set:
        return strategy
    if strategy.delta is None:
        raise InternalError("an approx strategy without delta")
    sigmas = [m.noise.scale for m in strategy.measurements]
    found = certify(sigmas, sens, strategy.epsilon, strategy.delta)
    grow = found.factor**2
    measurements = tuple(
        replace(m, noise=Noise(DISCRETE_GAUSSIAN.name, sigma), share=sens.l2_squared / sigma**2)
        for m, sigma in zip(strategy.measurements, found.sigmas, strict=True)
    )
    tables = tuple(
        replace(
            t, total_variance=t.total_variance * grow, expected_rmse=t.expected_rmse * found.factor
        )
        for t in strategy.tables
    )
    return replace(
        strategy,
        measurements=measurements,
        tables=tables,
        workload_error=strategy.workload_error * grow,
    )


def certified_choice(choice: AccountantChoice, sens: Sensitivity) -> AccountantChoice:
    """The accountant choice with approx priced as it is drawn.

    Certifying only adds noise (c ≥ 1), so an approx strategy that already loses keeps its
    continuous figure (a lower bound on its error; it is never drawn) and costs no PLD."""
    approx = next((s for s in choice.strategies if accountant(s.accounting).priced_as_set), None)
    others = [s.workload_error for s in choice.strategies if s is not approx]
    if approx is None or (others and approx.workload_error >= min(others)):
        return choice
    certified = certified_strategy(approx, sens)
    strategies = tuple(certified if s is approx else s for s in choice.strategies)
    best = min(strategies, key=lambda s: s.workload_error)
    return AccountantChoice(winner=best.accounting, strategies=strategies)
