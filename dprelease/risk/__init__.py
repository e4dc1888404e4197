"""Disclosure risk of the data holder's own data: why DP (CONFIDENTIAL results throughout).

- classes          equivalence classes over quasi-identifiers; k-anonymity
- diversity        l-diversity: distinct, entropy, recursive (c, l)
- closeness        t-closeness: EMD with equal or ordered ground distance
- attacks          homogeneity and skewness attacks; what knowing a person's QI reveals
- generalise       coarsenings from the plan's bins and hierarchy that reach a chosen k
- measures         all of the above in one call (`measure_risk`) and its JSON
- area_tables      the per-area tables a reconstruction attacker sees (exact, DP)
- area_milp        one area rebuilt as an integer program (HiGHS); uniqueness by a no-good cut
- area_chain       records that meet exact tables, built table by table (when the MILP is out
                   of time)
- reconstruct      the reconstruction attack (HiGHS MILP), exact tables beside DP ones
- command          the `risk` and `reconstruct` commands
"""
