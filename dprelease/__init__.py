"""dprelease: plan a privacy-loss budget and publish differentially private tables.

The module map (the one place it is written; the README points here). Dependencies point
inward: each line imports only from lines above it or from its own subpackage.

- errors.py       DPReleaseError (user-fixable, exit 2) and InternalError (a bug)
- limits.py       every numeric limit (δ, ε, ρ, cells, rows per unit, targets, data size, rows)
- admission.py    the stages' cost estimators (registered by each stage) and admit(plan, data,
                  stages): every command's work and memory, from the plan and the data's
                  size, before anything is charged; a path that fits, or one line naming the
                  limit
- budget_text.py  the one text of ε, δ, ρ for people (display only; rounded to the safe side)
- plan/           the release plan as values (contract v1)
    schema          columns and their public domains, bins, geography hierarchy
    table_spec      TableSpec, the privacy unit, sensitivity, budget-number checks
    survey_weight   a table's survey weight (issue 37.8): its column and bounds [lo, W]
    model           Plan, Budget, Postprocess
    synthesis       what a synthesis share measures (issue 38.6): components, candidate pairs
    size            a plan's cells counted from its domain sizes, before expanding any
    fields          the allowed keys of each section; a column, a table, a domain, bins parsed
    parse           parse_plan (every problem at once); read and write plan files (YAML/JSON)
    names           the one rule of a data set's name (`dataset:`, the ledger account)
    yaml_text       writes the YAML
    edit            edits to a draft plan mapping (the dashboard), domains from text/codebooks
    model_spec      a regression's and a PCA's `stat:` (issue 28.4; errors only: a leaf)
    bounds          a statistic's public bounds: a finite number, [lo, hi] (parse_bounds)
    stat_spec       a statistic's spec (`stat:`: quantile, sum, mean; their methods) and a
                    discovery's; parse_stat, parse_discover, labels (errors only: a leaf)
    statistic       StatisticTable (a table's `stat:`), Discovery (`domain: {discover:}`), their
                    checks
    statistic_edit  dashboard edits: add a statistic, discover a column's domain
    weight_edit     dashboard edit: set or clear a table's survey weight (issue 37.8)
    zeros           structural zeros and invariant tables (issue 27): values, cell masks, checks
    constraints_edit  dashboard edits: add or remove a structural zero
    model_edit      dashboard edit: add a regression or a PCA
    subtables       which tables determine which sub-tables (hierarchy included); cell maps
- strategy/       measurement strategy (no data): the plan's domain and marginals, the exact
                  least-squares error, budget optimisation, select_strategy (handed the
                  accountant: what the strategy needs of one is its StrategyAccountant
                  protocol), top-down whole tables, listed (exact error of consistency over
                  listed tables), cost (the error model's size and a search's work, from the
                  tables alone). Below accounting/, which asks it for `strategy: auto` and
                  `accounting: auto` and never the reverse
- accounting/     privacy accounting; no data needed
    bisection       the one monotone search every inverse and conversion uses
    precise         high-precision bounds behind the exact checks
    composition     Guarantee; basic, advanced, KOV composition; zCDP ↔ (ε, δ)
    mechanisms/     one module per mechanism (discrete_laplace, gaussian, discrete_gaussian),
                    base (what a mechanism provides), registry (MECHANISMS, Noise)
    accountants/    one module per accountant (pure, zcdp, approx, advanced): its name, labels,
                    unit, δ, mechanism, budget value (Target), split, composition and what the
                    strategy needs; base (what an accountant provides), registry (ACCOUNTANTS,
                    `auto`'s forced choice, the plan's accounting rules)
    splitting       numerical solvers for optimal budget splits
    shares          each table's share in the accountant's unit; fit_exactly (exact sums)
    allocation      allocate(plan): each count table's budget and noise, their composed
                    total (a plan with statistics is stats/allocation's)
    auto            `accounting: auto`: choose_accountant, the least expected error
    strategy_allocation  the allocation under `strategy: auto` (the strategy's measurements)
    counted         what a release counts: the tables and the unions the strategy measures
    weighted        survey-weighted tables priced as count tables, then sensitivity and noise
                    W times (issue 37.8)
    dgauss_pld      approx's discrete Gaussians: (ε, δ) certified by their PLD (dp-accounting),
                    the least common noise factor; approx_noise applies it to strategies
    cost            what a PLD certificate lays out, from the σ's alone (zCDP beyond the limit)
    tradeoffs       MoE against ε, the same noise under every accountant, scenarios
    epsilon_meaning ε as risk: posterior odds, membership-test bounds, one sentence (the report
                    and the dashboard show it beside ε; no data)
- data/           CONFIDENTIAL microdata
    read            read_data: a data file of any registered format into a column table
    formats/        the readers' registry (name, suffixes, signature, engines, module): text,
                    parquet, workbook, and through pyreadstat (readstat) stata, spss, sas,
                    xport; declared (value and variable labels: the producer's codebook)
    columns         which columns to read; values as numpy without pandas
    csv_file        CSV: encoding, delimiter and header sniffed, read by pyarrow in blocks
    excel           .xlsx: decoded size from the sheet's XML first, then one streaming pass
    domains         DISCLOSIVE: a column's domain read from the data (the user's explicit choice)
    size_limits     SizeLimits: the decoded bytes and rows a read may reach (every reader)
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
    consistency     weighted least squares under the shared-sum constraints; bounds by active set
    rounding        controlled rounding that keeps the constraints (HiGHS MILP, LP, or sequential)
    pipeline        the steps in STEP_ORDER: consistent, clamp, nonnegative, integer
    weight_groups   tables post-processed together: counts apart from each weight's totals
    accuracy        RMSE and bias before/after post-processing, by simulation
- synthetic/      synthetic microdata from the post-processed measurements (issue 27): junction
                  (the model's cliques and tree, from the plan; its bound), fit (integer clique
                  tables), records (one row per person), microdata (synthesize, mismatches);
                  with a share (issue 38.6) measure (the share's draw: 1-way marginals, the
                  private choice of pairs, their noise handed in) and join (every column)
- ledger/         lifetime spend per data set against a cap (SQLite); charged once or not at all
    values, accounts, files (where the ledger is), store (Ledger), command (`dprelease ledger`)
    plans           the dashboard's plans kept beside it, each by its browser's token
- stats/          statistics beyond counts (quantiles, sums, means, domain discovery, sparse
                  vector). Below release/: a statistic is priced by accounting/'s mechanisms
                  and reads data/'s rows, and release/ draws it (handing it secure noise), so
                  it sits between the two. The whole plan's allocation is here (issue 26):
                  stats/allocation takes the statistics' shares off the total and hands the
                  count tables down to accounting/'s allocate, which never asks for them.
    budget          Share (a budget in the accountant's unit), StatContext (who neighbours are)
    kind, registry  one StatisticKind object per kind and method (calibrate, draw, errors,
                    texts); the registry is the only importer of the statistic modules
    quantile, sums, means, discovery   the statistics themselves; smooth_quantile (a
                    quantile by smooth sensitivity) and aggregate_mean (a mean by sample and
                    aggregate) need no clamping bounds (issue 28.1)
    models          regression and PCA as statistics (issue 28.4), made of: moments (noisy
                    second moments of bounded rows), regression (linear, noisy sufficient
                    statistics), logistic (objective perturbation), pca (noisy covariance)
    noise, ranks    the noise a draw is handed (secure from release/, or PREVIEW numpy)
    entry           a statistic's calibrated budget, its plan --json entry, its errors
    allocation      allocate(plan) -> PlanAllocation, the whole plan's (what `plan` prints
                    and a release spends): statistics' and discoveries' shares off the total
                    first, composed with the counts under every accountant; synthesis
                    (the synthetic microdata's own share, issue 38.6, cut into its parts)
    data, source    CONFIDENTIAL rows a statistic reads; sparse_vector (Sparse(c), for
                    release/suggest)
- release/        where true counts meet noise, and what leaves the tool
    noise           secure noise for releases (exact tables or OpenDP); numpy for previews only
    exact_sampler   exact, secure, vectorised inverse-CDF tables (OS CSPRNG, certain floors)
    exact_noise     the discrete Laplace and discrete Gaussian table samplers and tails
    draw            draw_release (secure) and draw_preview
    report, export  the release as CSV tables and an HTML report; metadata (metadata.json, each
                    table's released error: read by both)
    constraints_files  what a release says of its invariant tables and structural zeros
    report_domains  the report's public definitions: each column's codes, labels, bins
    statistics      discovery, then the completed plan, then each statistic (secure/preview)
    statistics_files  a statistic's CSV (by-columns, value), metadata and report section
    stat_noise      the secure noise statistics are handed (OpenDP, the OS CSPRNG);
                    synthesis_noise the synthesis share's (OpenDP's noisy max too)
    suggest         the sparse vector's charged table suggestion
    microdata_file  microdata.csv (issue 27), its metadata entry and report section
    publish         charged_release: the one charged flow (true counts in; noise, ledger, zip)
    service         the one release flow of the CLI and the dashboard: release_plan(request)
                    reads, finds the ledger account, checks, charges, draws, exports
    code_export     the release as code: a script or notebook through the library (`export`;
                    code_command is its CLI)
    background      work on another thread while a small data file is read (the allocation)
    admitted        the admission of plan, validate, release and the Preview (their stages);
                    preview_cost, the Preview's draws as a stage (issue 35)
    metrics         CONFIDENTIAL: preview error against the true counts (data holder only)
- sample/         the synthetic census-like sample data set (generator, geography)
- risk/           CONFIDENTIAL disclosure risk (k, l, t, attacks, reconstruction with area_milp,
                  one area's integer program)
- ldp/            local differential privacy: protocols, planner, simulation; heavy hitters
                  and itemsets of domains too large to list (prefix search, padding)
                  (sample/, risk/, ldp/ and graph/ each register their admission estimator
                  in their own `cost` module, issue 35)
- graph/          CONFIDENTIAL graphs from an edge list: edges (read, an undirected simple
                  graph), degrees (histograms, the node-DP projection, the sensitivities),
                  anonymity (k-degree risk and the anonymisation's figures), degree_sequence
                  (Liu–Terzi's optimal k-anonymous degree sequence by an O(n) DP, the lower
                  bounds on the edges to add), supergraph (the edges added in rounds; on small
                  graphs the fewest of several ways, within a work bound), release (the DP
                  degree distribution, charged to the ledger), command (`dprelease graph`)
- cli/            the command line (python -m dprelease), the top layer: SUBCOMMANDS lists one
                  module per area (add_parser, run: parse → call the library → print); plan,
                  release, validate, codebook (a file's declared labels), sample, risk; options
                  (shared arguments), text (output)

Importing dprelease imports none of the heavy parts; each subpackage re-exports its public
API lazily, and library code imports from the module itself.
"""

__version__ = "0.1.0"
