"""dprelease: plan a privacy-loss budget and publish differentially private tables.

Module map, in import order (each module imports only those above it):

- errors       DPReleaseError (user-fixable, exit 2) and InternalError (a bug)
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
- noise        OpenDP's secure samplers for releases; numpy samplers for previews only
- postprocess  clamp, non-negativity, integer rounding (consistency: see its docstring)
- release      draw_release (secure) and draw_preview: where true counts meet noise
- report, export   the release as metadata.json, CSV tables and an HTML report
- audit        empirical privacy audits: a lower bound on ε from samples (used by the tests)
- cli          the command line (python -m dprelease)

Importing dprelease imports none of the heavy parts; import the modules you need.
"""

__version__ = "0.1.0"
