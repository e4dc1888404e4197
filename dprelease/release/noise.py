"""Drawing noise: exact, secure samplers for a release; numpy for previews only.

`secure_noisy_counts` is the only sampler a release may use. Integer noise (discrete Laplace,
discrete Gaussian) comes from `exact_noise`'s table samplers (OS CSPRNG, exact inverse CDF,
> 10^7 cells/s) when they are faster, else from OpenDP (small tables, whose new table would
cost more to build than OpenDP's draws; scales too large for a table). The continuous
Gaussian is always OpenDP's. Both draw from a cryptographically secure source with exact
arithmetic, so the noise has no floating-point leaks and cannot be reproduced. Before any
draw, OpenDP's privacy map for the scale is checked against ours, so a wrong scale cannot slip
through, whichever sampler then draws.

`preview_noise` is numpy's fast pseudo-random sampler with a seedable generator: fine for a
data holder's preview, never for anything that leaves the tool (the release code never calls
it, and the preview type cannot be exported).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Iterable
from typing import Any

import numpy as np

from dprelease.accounting.mechanisms import Noise
from dprelease.errors import InternalError
from dprelease.plan.table_spec import Sensitivity
from dprelease.release import exact_noise

_SAFE_MAGNITUDE = 2**62  # counts and noise both below: their int64 sum cannot overflow


@functools.cache
def opendp_prelude() -> Any:
    """The parts of OpenDP a release draws with, imported on first use.

    Not `opendp.prelude`: that imports OpenDP's extras, and with them scikit-learn, scipy and
    polars where they are installed (about 3 s of CPU); the release needs only the
    measurements and the domains, metrics, measures and types they are built from.
    """
    import opendp.domains
    import opendp.measurements
    import opendp.measures
    import opendp.metrics
    import opendp.mod
    import opendp.typing

    opendp.mod.enable_features("contrib")
    parts = (opendp.mod, opendp.domains, opendp.metrics, opendp.measures, opendp.typing)
    names = {k: v for part in parts for k, v in vars(part).items() if not k.startswith("_")}
    dp = types.SimpleNamespace(**names)
    dp.m = opendp.measurements
    return dp


def warm_up() -> None:
    """Import OpenDP now (e.g. in a thread while the data are read): saves start-up time."""
    opendp_prelude()


def build_samplers(draws: Iterable[tuple[Noise, int]]) -> None:
    """Build (and keep) the exact samplers a release's draws will share, deciding on all the
    cells drawn with one noise, not table by table: eleven tables at one scale drew ten with
    OpenDP, cell by cell, before the eleventh (county × sex) built the table all could have
    used. `draws` are (noise, cells) pairs: public, the plan's allocation only."""
    cells: dict[Noise, int] = {}
    for noise, count in draws:
        cells[noise] = cells.get(noise, 0) + count
    for noise, count in cells.items():
        noise.kind.exact_sampler(exact_noise, noise.scale, count)


def _check_privacy_map(measurement: Any, noise: Noise, sens: Sensitivity) -> None:
    """OpenDP's privacy map must agree with ours (ε = Δ₁/b, or ρ = Δ₂²/2σ²)."""
    check = noise.kind.opendp_map_check(noise.scale, sens)
    if check is None:  # OpenDP's integer L2 distance needs a whole number
        return
    d_in, expected = check
    mapped = float(measurement.map(d_in))
    if mapped > expected * (1 + 1e-9):
        raise InternalError(f"OpenDP's privacy map gives {mapped!r}, we accounted {expected!r}")


def secure_noisy_counts(
    true_counts: np.ndarray, noise: Noise, l1: int, l2_squared: int
) -> np.ndarray:
    """Counts plus fresh secure noise (int64, or float64 for the continuous Gaussian)."""
    measurement = noise.kind.measurement(opendp_prelude(), noise.scale)
    _check_privacy_map(measurement, noise, Sensitivity(l1=l1, l2_squared=l2_squared))
    sampler = noise.kind.exact_sampler(exact_noise, noise.scale, true_counts.size)
    if sampler is not None:
        counts = true_counts.astype(np.int64)
        draws: np.ndarray = sampler.sample(counts.size)
        if counts.size and max(np.abs(counts).max(), np.abs(draws).max()) >= _SAFE_MAGNITUDE:
            raise InternalError("a count or a noise draw is too large for int64")
        noisy: np.ndarray = counts + draws
        return noisy
    if noise.kind.integer:
        drawn = measurement(true_counts.astype(np.int64).tolist())
        return np.asarray(drawn, dtype=np.int64)
    drawn = measurement(true_counts.astype(np.float64).tolist())
    return np.asarray(drawn, dtype=np.float64)


def preview_noise(noise: Noise, size: int, rng: np.random.Generator) -> np.ndarray:
    """Fast pseudo-random noise for a PREVIEW only: never used for a release."""
    return noise.preview(size, rng)
