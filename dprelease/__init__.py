"""dprelease: plan a privacy-loss budget and publish differentially private tables.

The module map (the one place it is written; the README points here). Dependencies point
inward: each line imports only from lines above it or from its own subpackage.

- errors.py       DPReleaseError (user-fixable, exit 2) and InternalError (a bug)
- limits.py       every numeric limit (δ, ε, ρ, cells, rows per unit, targets, data size, rows)
- budget_text.py  the one text of ε, δ, ρ for people (display only; rounded to the safe side)
- plan/           the release plan as values (contract v1)
    schema          columns and their public domains, bins, geography hierarchy
    table_spec      TableSpec, the privacy unit, sensitivity, budget-number checks
    model           Plan, Budget, Postprocess
    size            a plan's cells counted from its domain sizes, before expanding any
    fields          the allowed keys of each section; a column, a table, a domain, bins parsed
    parse           parse_plan (every problem at once); read and write plan files (YAML/JSON)
    yaml_text       writes the YAML
    edit            edits to a draft plan mapping (the dashboard), domains from text/codebooks
    statistic       StatisticTable (a table's `stat:`), Discovery (`domain: {discover:}`), their
                    checks; uses stats/spec, a leaf (errors only), for the specs themselves
    statistic_edit  dashboard edits: add a statistic, discover a column's domain
- accounting/     privacy accounting; no data needed
    bisection       the one monotone search every inverse and conversion uses
    precise         high-precision bounds behind the exact checks
    composition     Guarantee; basic, advanced, KOV composition; zCDP ↔ (ε, δ)
    mechanisms/     one module per mechanism (discrete_laplace, gaussian, discrete_gaussian),
                    base (what a mechanism provides), registry (MECHANISMS, Noise)
    splitting       numerical solvers for optimal budget splits
    shares          each table's share in the accountant's unit; fit_exactly (exact sums)
    allocation      allocate(plan): each table's budget and noise, the composed total
    dgauss_pld      approx's discrete Gaussians: (ε, δ) certified by their PLD (dp-accounting),
                    the least common noise factor; approx_noise applies it to strategies
    cost            what a PLD certificate lays out, from the σ's alone (zCDP beyond the limit)
    statistics      statistics' and discoveries' shares off the total first, composed with the
                    counts under every accountant (uses stats/)
    statistic_budget  a statistic's calibrated mechanism, its plan --json entry, its errors
    tradeoffs       MoE against ε, the same noise under every accountant, scenarios
- data/           CONFIDENTIAL microdata
    read            read_data: a CSV, Parquet or Excel file into a column table, size limits
    columns         which columns to read; values as numpy without pandas
    csv_file        CSV: encoding, delimiter and header sniffed, read by pyarrow in blocks
    excel           .xlsx: decoded size from the sheet's XML first, then one streaming pass
    count           map values onto domains, count() -> TrueCounts
    report          DataReport: what encoding did to the rows, and the rows each statistic
                    cannot use (StatisticReport) (for the data holder only)
    coverage        how the data's values fall against the declared domains; rows the plan's
                    tables and statistics leave out (the dashboard's gate above 1%)
    fingerprint     record fingerprints: the ledger's key for "the same records" (also as a
                    FingerprintAccumulator inside an engine's counting pass)
    engines/        streaming counts (arrow, duckdb, spark) -> CountResult: TrueCounts + report;
                    source (where the data are), grouped (one GROUPING SETS query), result,
                    java (Java 17+ for spark, checked before Spark starts)
- postprocess/    after the noise, no privacy cost
    subtables       which tables determine which sub-tables (hierarchy included); cell maps
    consistency     weighted least squares under the shared-sum constraints; bounds by active set
    rounding        controlled rounding that keeps the constraints (HiGHS MILP, LP, or sequential)
    pipeline        the steps in STEP_ORDER: consistent, clamp, nonnegative, integer
    accuracy        RMSE and bias before/after post-processing, by simulation
- synthetic/      synthetic microdata from the post-processed measurements (issue 27): junction
                  (the model's cliques and tree, from the plan; its bound), fit (integer clique
                  tables), records (one row per person), microdata (synthesize, mismatches)
- ledger/         lifetime spend per data set against a cap (SQLite); charged once or not at all
    values, accounts, files (where the ledger is), store (Ledger), command (`dprelease ledger`)
- release/        where true counts meet noise, and what leaves the tool
    noise           secure noise for releases (exact tables or OpenDP); numpy for previews only
    exact_sampler   exact, secure, vectorised inverse-CDF tables (OS CSPRNG, certain floors)
    exact_noise     the discrete Laplace and discrete Gaussian table samplers and tails
    draw            draw_release (secure) and draw_preview
    report, export  the release as metadata.json, CSV tables and an HTML report
    report_domains  the report's public definitions: each column's codes, labels, bins
    statistics      discovery, then the completed plan, then each statistic (secure/preview)
    statistics_files  a statistic's CSV (by-columns, value), metadata and report section
    microdata_file  microdata.csv (issue 27), its metadata entry and report section
    publish         charged_release: the one charged flow (true counts in; noise, ledger, zip)
    service         what the CLI and the dashboard share around it: the ledger, the account,
                    the cap check; the uncharged release (`--no-ledger`, "ledger": null)
    code_export     the release as code: a script or notebook through the library (`export`;
                    code_command is its CLI)
    background      work on another thread while a small data file is read (the allocation)
    metrics         CONFIDENTIAL: preview error against the true counts (data holder only)
- sample/         the synthetic census-like sample data set (generator, geography)
- strategy/       measurement strategy (no data): the plan's domain and marginals, the exact
                  least-squares error, budget optimisation, select_strategy, choose_accountant,
                  top-down whole tables, listed (exact error of consistency over listed tables),
                  cost (the error model's size and a search's work, from the tables alone).
                  A concern of its own: it plans what to measure, between accounting/ (which it
                  uses, and whose strategy_allocation calls it) and the release
- stats/          statistics beyond counts: quantiles, sums, means, domain discovery, sparse
                  vector; each a spec, a calibration within a budget share, a secure (OpenDP)
                  and a preview sampler. Its own concern: other queries than tables of counts;
                  source (CONFIDENTIAL rows a statistic reads), command (release/validate of
                  such plans), suggest (the sparse vector's charged table suggestion)
- risk/           CONFIDENTIAL disclosure risk (k, l, t, attacks, reconstruction with area_milp,
                  one area's integer program); ε as risk
- ldp/            local differential privacy: protocols, planner, simulation
- commands.py     the runners of plan, release, validate, sample, and what they print
- cli.py          the command line (python -m dprelease): arguments, exit codes

Importing dprelease imports none of the heavy parts; each subpackage re-exports its public
API lazily, and library code imports from the module itself.
"""

__version__ = "0.1.0"
