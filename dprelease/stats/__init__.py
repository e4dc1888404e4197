"""Statistics beyond counts (issue 16): quantiles, sums, means, domain discovery, sparse vector.

Each statistic is a spec (parsed from the plan), a calibration `calibrate_*(spec, share, ctx)`
that turns the allocator's budget share into a frozen mechanism whose exact cost never exceeds
the share (reported back as `mechanism.cost`, a `Share`), a secure release sampler (OpenDP),
a preview sampler (numpy, PREVIEW only) and its error.

- spec           QuantileSpec, SumSpec, MeanSpec, DiscoverSpec; parse_stat, parse_discover
- budget         Share (ε | (ε, δ) | ρ per accountant), StatContext (max_rows, neighbours, groups)
- data           StatData: CONFIDENTIAL rows (cell index, value) of one statistic
- quantile       exponential mechanism over a public grid; ε = 2Δ/s, ρ = ε²/8
- sums           clamp, fixed point, exact sensitivities, the accountant's noise
- means          noisy sum / noisy count (post-processing); delta method and simulation
- discovery      stability-based histogram: (ε, δ) keys above a threshold, sorted
- sparse_vector  Sparse(c) / AboveThreshold: which candidates are above T

The privacy audit of discrete-output mechanisms is a test helper (tests/helpers/stats_audit.py).
Importing this package imports none of its modules.
"""
