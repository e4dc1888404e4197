"""dprelease: plan a privacy-loss budget and publish differentially private tables.

Module map, in import order (each module imports only those above it):

- errors       DPReleaseError (user-fixable, exit 2) and InternalError (a bug)
- limits       every numeric limit in one place (decoded data size, rows, …)
- schema       columns and their public domains, bins, geography hierarchy
- tables       TableSpec, privacy unit, sensitivity
- plan         the release plan as a value (contract v1); planfile reads and writes it
- bisection    the one monotone search every inverse and conversion uses
- accounting   composition (basic, advanced, KOV) and zCDP ↔ (ε, δ) conversion
- mechanisms   privacy maps, their inverses, noise std and margins of error
- splitting    numerical solvers for optimal budget splits
- allocation   allocate(plan): each table's budget and noise, the composed total
- sample       the synthetic census-like sample data set
- reading      read CSV (any common delimiter and encoding), Parquet, Excel into a column table
- data         map values onto domains, count() -> TrueCounts (confidential)
- engines      streaming counts (arrow, duckdb, spark) -> CountResult: TrueCounts + DataReport
- noise        OpenDP's secure samplers for releases; numpy samplers for previews only
- subtables    which tables determine which sub-tables (hierarchy included); cell maps
- consistency  weighted least squares under the shared-sum constraints; bounds by active set
- rounding     controlled rounding that keeps the constraints (HiGHS MILP, LP, or sequential)
- postprocess  the steps in STEP_ORDER: consistent, clamp, nonnegative, integer
- postprocess_accuracy   RMSE and bias before/after post-processing, by simulation
- release      draw_release (secure) and draw_preview: where true counts meet noise
- report, export   the release as metadata.json, CSV tables and an HTML report
- ledger       lifetime spend per data set against a cap (SQLite); charged once or not at all
- publish      one release charged to the ledger: read, count, secure noise, zip (dashboard)
- plan_edit    edits to a draft plan mapping (the dashboard's plan), domains from text/codebooks
- coverage     CONFIDENTIAL: how the data's values fall against the declared domains
- tradeoffs    MoE against ε, the same noise under every accountant, scenarios (no data)
- metrics      CONFIDENTIAL: preview error against the true counts (data holder only)
- audit        empirical privacy audits: a lower bound on ε from samples (used by the tests)
- risk/        CONFIDENTIAL disclosure risk (k, l, t, attacks, reconstruction); ε as risk
- cli          the command line (python -m dprelease)

Importing dprelease imports none of the heavy parts; import the modules you need.
"""

__version__ = "0.1.0"
