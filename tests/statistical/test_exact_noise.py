"""The exact table samplers: χ² fit to the exact pmf and power against a 5 % wrong scale,
the tail branch with shrunk tables, the privacy audit through them, and a release drawn
end to end through them.

The samplers read the OS CSPRNG and cannot be seeded: every verdict uses p = 1e-6 (a false
alarm once in a million runs). Power: 10^6 draws against scale × 0.95 and × 1.05 give χ²
statistics in the thousands (b = 0.3: the share of non-zero draws moves by 44 standard
errors), far beyond the 1e-6 critical value of ~90 on ≤ 50 bins.
"""

import math

import numpy as np
import pytest

from dprelease.accounting.allocation import allocate
from dprelease.accounting.mechanisms import Noise
from dprelease.data.count import TrueCounts
from dprelease.plan.parse import parse_plan
from dprelease.plan.table_spec import Sensitivity
from dprelease.release import exact_noise
from dprelease.release.draw import draw_release
from dprelease.release.exact_noise import DiscreteGaussianSampler, DiscreteLaplaceSampler
from helpers.audit import audit_table, claim_of, run_audit
from helpers.exact_pmf import chi_square

THRESHOLD = 1e-6
KINDS = {"discrete_laplace": DiscreteLaplaceSampler, "discrete_gaussian": DiscreteGaussianSampler}

FULL_TABLES = [
    ("discrete_laplace", 0.3),
    ("discrete_laplace", 17.0),
    ("discrete_laplace", 400.0),  # a big scale: K = 6,654
    ("discrete_gaussian", 0.7),
    ("discrete_gaussian", 21.3),
    ("discrete_gaussian", 2000.0),  # a big scale: K = 11,539
]


def _fits_and_has_power(sample, mechanism, scale, wrong=(0.95, 1.05)):
    assert chi_square(sample, mechanism, scale, scale) > THRESHOLD
    for factor in wrong:
        p = chi_square(sample, mechanism, scale * factor, scale)
        assert p < THRESHOLD, f"no power against scale × {factor}"


@pytest.mark.parametrize(("mechanism", "scale"), FULL_TABLES, ids=lambda v: str(v))
def test_full_table_fits_the_exact_pmf_and_rejects_a_5_percent_wrong_scale(mechanism, scale):
    sample = KINDS[mechanism](scale).sample(1_000_000)
    assert sample.dtype == np.int64
    _fits_and_has_power(sample, mechanism, scale)


def test_laplace_tail_branch_fits():
    sampler = DiscreteLaplaceSampler(3.0, half_width=2)  # P(|X| ≥ 3) ≈ 0.35: the tail runs
    sample = sampler.sample(400_000)
    assert np.mean(np.abs(sample) >= 3) == pytest.approx(
        2 * math.exp(-1) / (1 + math.exp(-1 / 3)), rel=0.02
    )
    assert np.abs(sample).max() >= 6  # tails of tails (Y in the tail again) occurred
    _fits_and_has_power(sample, "discrete_laplace", 3.0)


def test_gaussian_tail_branch_fits():
    sampler = DiscreteGaussianSampler(3.0, half_width=2)  # P(|X| ≥ 3) ≈ 0.33, drawn by rejection
    sample = sampler.sample(40_000)
    assert np.mean(np.abs(sample) >= 3) > 0.3
    _fits_and_has_power(sample, "discrete_gaussian", 3.0, wrong=(0.9, 1.1))


# --- the privacy audit (tests/helpers/audit.py) through the exact samplers --------------


def _table(budget):
    raw = {
        "columns": {"sex": {"kind": "categorical", "domain": ["F", "M"]}},
        "tables": [{"name": "t", "by": ["sex"]}],
        "budget": budget,
    }
    return allocate(parse_plan(raw)).measurements[0]  # what the release draws noise for


def _exact(half_width):
    def sampler(true_counts: np.ndarray, noise: Noise, sens: Sensitivity) -> np.ndarray:
        kind = KINDS[noise.mechanism]
        return true_counts + kind(noise.scale, half_width=half_width).sample(true_counts.size)

    return sampler


@pytest.mark.slow
@pytest.mark.parametrize("half_width", [None, 1], ids=["full-table", "tiny-table"])
@pytest.mark.parametrize(
    "budget",
    [{"accounting": "pure", "epsilon": 1.0}, {"accounting": "zcdp", "rho": 0.5, "delta": 1e-10}],
    ids=["discrete_laplace", "discrete_gaussian"],
)
def test_audit_of_the_exact_sampler_passes_and_catches_scale_times_0_8(budget, half_width):
    table = _table(budget)
    honest = audit_table(table, 20_000, sampler=_exact(half_width))
    assert not honest.violated, honest
    under = audit_table(table, 20_000, scale_factor=0.8, sampler=_exact(half_width))
    assert under.violated, f"no power against scale × 0.8: {under}"


def test_the_release_sampler_is_the_exact_one_at_audit_sizes():
    """The audits in test_audit.py draw 20,000+ cells: `secure_noisy_counts` takes the exact
    sampler there, so they audit it too."""
    table = _table({"accounting": "pure", "epsilon": 1.0})
    assert table.noise.kind.exact_sampler(exact_noise, table.noise.scale, 20_000) is not None
    result = run_audit(table.noise, table.sensitivity, claim_of(table), 20_000)
    assert not result.violated


# --- a release end to end ---------------------------------------------------------------


def test_a_release_drawn_through_the_exact_sampler():
    counties = [f"c{i:05d}" for i in range(20_000)]
    raw = {
        "columns": {
            "county": {"kind": "categorical", "domain": counties},
            "sex": {"kind": "categorical", "domain": ["F", "M"]},
        },
        "tables": [
            {"name": "county_by_sex", "by": ["county", "sex"]},
            {"name": "sex", "by": ["sex"]},
        ],
        "budget": {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-10, "allocation": "equal"},
    }
    plan = parse_plan(raw)
    allocation = allocate(plan)
    rng = np.random.default_rng(7)  # the *data* are made up; the noise is not seeded
    big = rng.integers(0, 50, size=40_000).astype(np.int64)
    true = TrueCounts({"county_by_sex": big, "sex": big.reshape(-1, 2).sum(axis=0)})
    release = draw_release(plan, true, allocation, simulations=0)
    county = release.table("county_by_sex")
    noise = county.budget.noise
    assert noise.kind.exact_sampler(exact_noise, noise.scale, big.size) is not None
    assert county.noisy_counts.dtype == np.int64 and county.noisy_counts.shape == big.shape
    residual = (county.noisy_counts - big).astype(float)
    assert residual.std() == pytest.approx(noise.std, rel=0.03)
    assert np.mean(county.noisy_counts == big) < 0.1  # no true count passes through
    assert _fits(residual.astype(np.int64), noise)
    assert release.table("sex").noisy_counts.dtype == np.int64
    assert not hasattr(release, "true_counts")


def _fits(residual, noise):
    return chi_square(residual, noise.mechanism, noise.scale, noise.scale) > THRESHOLD
