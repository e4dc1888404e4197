"""The exact samplers' branches with chosen bits, their tables against 120-digit CDFs, and
the choice between them and OpenDP."""

import math
from fractions import Fraction

import numpy as np
import pytest

from dprelease.accounting.mechanisms import Noise
from dprelease.release import exact_noise
from dprelease.release.exact_noise import DiscreteGaussianSampler, DiscreteLaplaceSampler
from dprelease.release.exact_sampler import MAX_HALF_WIDTH, LazyUniform, os_random_words
from dprelease.release.noise import secure_noisy_counts
from helpers.exact_pmf import FedWords, cdf, floor_times

KINDS = [
    ("discrete_laplace", DiscreteLaplaceSampler, 17.0),
    ("discrete_laplace", DiscreteLaplaceSampler, 0.3),
    ("discrete_gaussian", DiscreteGaussianSampler, 21.3),
    ("discrete_gaussian", DiscreteGaussianSampler, 0.7),
]
TOP = 2**64 - 1


@pytest.mark.parametrize(("mechanism", "kind", "scale"), KINDS)
def test_every_threshold_is_the_floor_of_the_exact_cdf(mechanism, kind, scale):
    sampler = kind(scale)
    k = sampler.half_width
    expected = [floor_times(cdf(mechanism, scale, v), 64) for v in range(-k - 1, k + 1)]
    assert sampler._floors.tolist() == expected


def _value_of_word(sampler, word: int) -> int:
    return int(kind_sample(sampler, [word])[0])


def kind_sample(sampler, words: list[int]) -> np.ndarray:
    sampler.words = FedWords(words)
    drawn = sampler.sample(1)
    assert sampler.words.used == len(words), "the sampler read a different number of words"
    return drawn


@pytest.mark.parametrize(("mechanism", "kind", "scale"), KINDS[::2])
def test_an_undecided_first_word_is_decided_exactly_by_more_bits(mechanism, kind, scale):
    sampler = kind(scale)
    k = sampler.half_width
    value = 3  # the threshold T = P(X ≤ 3): U below it gives 3, above it gives 4
    exact = cdf(mechanism, scale, value)
    first = floor_times(exact, 64)
    second = floor_times(exact, 128) - (first << 64)  # U's next 64 bits equal T's
    third = floor_times(exact, 192) - (floor_times(exact, 128) << 64)
    assert 0 < second < TOP and 0 < third < TOP
    assert int(sampler._floors[value + k + 1]) == first
    assert kind_sample(sampler, [first, second - 1])[0] == value  # U < T at 128 bits
    assert kind_sample(sampler, [first, second + 1])[0] == value + 1  # U > T at 128 bits
    # equal at 128 bits: the third word decides
    assert kind_sample(sampler, [first, second, third - 1])[0] == value
    assert kind_sample(sampler, [first, second, third + 1])[0] == value + 1


@pytest.mark.parametrize(("mechanism", "kind", "scale"), KINDS)
def test_words_between_thresholds_give_each_value_once(mechanism, kind, scale):
    sampler = kind(scale, half_width=4)
    floors = [int(f) for f in sampler._floors]
    for j in range(1, len(floors)):
        if floors[j] - floors[j - 1] > 2:
            word = (floors[j - 1] + floors[j]) // 2
            assert _value_of_word(sampler, word) == j - 5


def test_the_laplace_tail_is_the_edge_plus_a_nonnegative_draw():
    sampler = DiscreteLaplaceSampler(3.0, half_width=2)
    floors = [int(f) for f in sampler._floors]

    def word_for(value: int) -> int:  # the middle of the value's interval
        j = value + 3
        return (floors[j - 1] + floors[j]) // 2 if 0 < j < len(floors) else TOP

    # right tail; the tail draws 2·1 + 16 words: −1 is discarded, 1 is taken
    words = [TOP, word_for(-1), word_for(1)] + [word_for(0)] * 16
    assert kind_sample(sampler, words)[0] == 3 + 1
    # left tail (word 0); the first non-negative draw is itself a tail: 3 + 3 + 2
    words = [0, TOP, word_for(-2), word_for(0)] + [word_for(0)] * 15
    words += [word_for(2)] + [word_for(0)] * 17
    assert kind_sample(sampler, words)[0] == -(3 + 3 + 2)


def test_the_gaussian_tail_proposes_a_geometric_and_accepts_exactly():
    sigma = 3.0
    sampler = DiscreteGaussianSampler(sigma, half_width=2)  # m = 3, r = e^{−1/3}
    half = 2**63
    # j = ⌊−ln(1/2)·σ²/m⌋ = ⌊3 ln 2⌋ = 2; accept: U = 0.1 < e^{−4/18}
    assert kind_sample(sampler, [TOP, half, int(0.1 * 2**64)])[0] == 5
    # rejected (0.9 > e^{−4/18} ≈ 0.80), then j = ⌊−3 ln 0.9⌋ = 0, accepted (U < e^0 = 1)
    words = [0, half, int(0.9 * 2**64), int(0.9 * 2**64), int(0.99 * 2**64)]
    assert kind_sample(sampler, words)[0] == -3
    # U's first word all ones: U ∈ [1 − 2^-64, 1), so −ln U ∈ (0, 2^-63]: j = 0 at once
    assert kind_sample(sampler, [TOP, TOP, half])[0] == 3


def test_a_lazy_uniform_reads_bits_until_a_floor_is_decided():
    shift = Fraction(1, 2**70)

    def image(low, high, digits):  # g(U) = 2U + 2^-70, increasing
        return 2 * low + shift, 2 * high + shift

    # U ∈ [1/2 − 2^-64, 1/2): g spans 1 − 2^-63 + 2^-70 … 1 + 2^-70, undecided at 64 bits
    high_next = LazyUniform(2**63 - 1, FedWords([TOP]))
    assert high_next.floor_of(image) == 1 and high_next.bits == 128  # U ≥ 1/2 − 2^-128
    low_next = LazyUniform(2**63 - 1, FedWords([0]))
    assert low_next.floor_of(image) == 0 and low_next.bits == 128  # U < 1/2 − 2^-64 + 2^-128
    decided = LazyUniform(2**62, FedWords([]))  # U ≈ 1/4: no more bits needed
    assert decided.floor_of(image) == 0 and decided.bits == 64


def test_os_words_are_fresh_uint64():
    first, second = os_random_words(1000), os_random_words(1000)
    assert first.dtype == np.uint64 and first.size == 1000
    assert not np.array_equal(first, second)


@pytest.mark.parametrize(
    ("mechanism", "kind"),
    [("laplace", DiscreteLaplaceSampler), ("gaussian", DiscreteGaussianSampler)],
)
def test_opendp_draws_small_new_tables_and_huge_scales(mechanism, kind):
    choose = getattr(exact_noise, f"discrete_{mechanism}")
    scale = 9.25
    k = kind.half_width_for(scale)
    assert choose(scale, exact_noise.CELLS_PER_HALF_WIDTH * k - 1) is None  # OpenDP: cheaper
    built = choose(scale, exact_noise.CELLS_PER_HALF_WIDTH * k)
    assert isinstance(built, kind)
    assert choose(scale, 1) is built  # built once: reused for any size
    huge = 10.0**6
    assert kind.half_width_for(huge) > MAX_HALF_WIDTH
    assert choose(huge, 10**9) is None


@pytest.mark.parametrize("mechanism", ["discrete_laplace", "discrete_gaussian"])
def test_secure_noisy_counts_adds_int64_noise_of_the_declared_spread(mechanism):
    noise = Noise(mechanism, 7.5)
    counts = np.arange(200_000, dtype=np.int64) % 1000
    noisy = secure_noisy_counts(counts, noise, l1=1, l2_squared=1)
    assert noisy.dtype == np.int64 and noisy.shape == counts.shape
    residual = (noisy - counts).astype(float)
    assert residual.std() == pytest.approx(noise.std, rel=0.02)
    assert abs(residual.mean()) < 6 * noise.std / math.sqrt(counts.size)
    assert (Noise(mechanism, 7.5).kind.exact_sampler(exact_noise, 7.5, 1)) is not None
