"""Issue 37.5: a statistic's `moe` (its CSV's column) covers the truth at least as often as the
plan's confidence says. Sums: the noise's own margin. Means: interval arithmetic on the noisy
sum and count, each at half the miss rate (`dprelease.stats.means.mean_moe`), from released
figures only. Checked by simulation with preview noise, fixed seeds; the power side: the
margin is not vacuous (well inside the bounds for large groups) and shrinks with the group."""

import numpy as np
import pytest

from dprelease.plan.stat_spec import parse_stat
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.data import StatData
from dprelease.stats.means import MeanKind, calibrate_mean
from dprelease.stats.noise import PreviewNoise
from dprelease.stats.sums import SumKind, calibrate_sum

CONFIDENCE = 0.95
DRAWS = 400


def _data(sizes: list[int], rng: np.random.Generator) -> tuple[StatData, np.ndarray]:
    cells = np.repeat(np.arange(len(sizes)), sizes)
    values = rng.normal(40, 25, size=cells.size).clip(0, 100)
    truth = np.array([values[cells == c].mean() for c in range(len(sizes))])
    return StatData(cells, values, len(sizes)), truth


@pytest.mark.parametrize("share", [Share("pure", epsilon=0.5), Share("zcdp", rho=0.02)])
def test_the_mean_moe_covers_the_clamped_mean(share: Share) -> None:
    rng = np.random.default_rng(37)
    data, truth = _data([30, 300, 3000], rng)
    spec = parse_stat({"mean": "income", "bounds": [0, 100]}, "t")
    mech = calibrate_mean(spec, share, StatContext())
    noise = PreviewNoise(rng)
    covered = np.zeros(3)
    widths = np.zeros(3)
    for _ in range(DRAWS):
        values, moe = MeanKind().draw_with_moe(data, mech, noise, CONFIDENCE)
        assert moe is not None
        covered += np.abs(values - truth) <= moe
        widths += moe
    assert np.all(covered / DRAWS >= CONFIDENCE)
    widths /= DRAWS
    assert widths[0] > widths[1] > widths[2]  # it shrinks with the group's size
    assert widths[2] < 5  # and is not vacuous: the bounds are 100 wide


def test_the_sum_moe_is_its_noise_margin_and_covers() -> None:
    rng = np.random.default_rng(38)
    data, _ = _data([500, 500], rng)
    spec = parse_stat({"sum": "income", "bounds": [0, 100]}, "t")
    mech = calibrate_sum(spec, Share("pure", epsilon=1.0), StatContext())
    truth = np.array([data.values[data.cells == c].round().sum() for c in range(2)])
    noise = PreviewNoise(rng)
    hits = 0
    for _ in range(DRAWS):
        values, moe = SumKind().draw_with_moe(data, mech, noise, CONFIDENCE)
        assert moe is not None and np.all(moe == mech.value_moe(1 - CONFIDENCE))
        hits += int(np.sum(np.abs(values - truth) <= moe))
    assert hits / (2 * DRAWS) >= CONFIDENCE - 0.02  # the margin is tight: about 95% exactly
