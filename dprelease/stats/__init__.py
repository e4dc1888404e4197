"""Statistics beyond counts (issues 16, 26): quantiles, sums, means, domain discovery.

Each statistic is one object in `registry` (`kind.StatisticKind`): its calibration turns the
allocator's budget share into a frozen mechanism whose exact cost never exceeds the share
(reported back as `mechanism.cost`, a `Share`); its draw adds the noise it is handed (secure
from `dprelease.release.stat_noise`, or `noise.PreviewNoise` for a PREVIEW); it states its
errors, their texts and its CSV labels. Its spec is the plan's (`dprelease.plan.stat_spec`).

- budget         Share (ε | (ε, δ) | ρ per accountant), StatContext (max_rows, neighbours, groups)
- kind, registry the statistic objects; the registry alone imports the statistic modules
- quantile       exponential mechanism over a public grid; ε = 2Δ/s, ρ = ε²/8
- sums           clamp, fixed point, exact sensitivities, the accountant's noise
- means          noisy sum / noisy count (post-processing); delta method and simulation
- discovery      stability-based histogram: (ε, δ) keys above a threshold, sorted
- smooth_quantile  quantiles by smooth sensitivity (NRS): no clamping bounds; Cauchy noise
                 for pure ε, Laplace for (ε, δ)
- aggregate_mean means by sample and aggregate: the exponential median of random groups' means
- noise, ranks   the noise a draw is handed; the quantile's utility
- entry          a statistic's budget entry (plan --json), its data-free error curve
- allocation     the whole plan's allocation (PlanAllocation): statistics' and discoveries'
                 shares, composed with the counts
- data, source   CONFIDENTIAL rows of a statistic
- sparse_vector  Sparse(c) / AboveThreshold: which candidates are above T (release/suggest)
- command        release/validate of plans with statistics (CLI)

The privacy audit of discrete-output mechanisms is a test helper (tests/helpers/stats_audit.py).
Importing this package imports none of its modules.
"""
