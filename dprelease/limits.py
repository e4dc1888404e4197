"""Numeric limits shared by the plan parser, the command line, the ledger, the dashboard's widgets
and the tests: one constant each, so that none of them can disagree.
"""

from __future__ import annotations

from dprelease.errors import quote

DELTA_LIMIT = 1e-3
"""The largest δ a plan, the CLI or the dashboard accepts, and the ledger's lifetime δ cap
when none is set. δ is the chance that the guarantee fails outright (a release may then reveal
anything), so useful values are far below 1/rows; above 1e-3 the ε of a plan means nothing
(δ = 0.9 made a zCDP budget of ρ = 0.6 read as ε ≈ 0)."""


def delta_limit_message(what: str, value: object) -> str:
    """The one-line refusal of a δ outside (0, DELTA_LIMIT]."""
    return (
        f"{what} must lie above 0 and at most {DELTA_LIMIT:g} (e.g. 1e-10), got {quote(value)}: "
        "δ is the chance the guarantee fails outright, and useful values are far below "
        "1/rows."
    )


MAX_CELLS = 10_000_000
"""Cells of all the plan's tables together (and values of all its column domains together).

Counted from the domain sizes arithmetically before any domain is expanded: 30 columns of
``{range: [0, 999999]}`` would otherwise cost seconds and gigabytes before being refused.
The sample plan has 10,401 cells; the largest census release we know of is far below this.
"""


EPSILON_LIMIT = 100.0
"""The largest total ε (and a table's locked ε) a plan or the dashboard accepts: beyond it a
"guarantee" says nothing (e^100 is the likelihood ratio it allows)."""

EPSILON_CAP_LIMIT = 1000.0
"""The largest lifetime ε cap of a data set in the ledger (the CLI's `--cap`, `ledger cap`, the
Release page's box): ten releases at the largest ε a plan allows."""

RHO_LIMIT = 50.0
"""The largest total ρ (and a table's locked ρ) under zCDP: ρ = 50 is ε ≈ 116 at δ = 1e-10."""

GRAPH_MAX_DEGREE_LIMIT = 10_000
"""The largest degree bound D of a graph's degree histogram (its bins 1 … D; under node-DP the
sensitivity is 2D + 1, so a larger D buys nothing but noise)."""

GRAPH_DEFAULT_MAX_DEGREE = 100
"""The top bin ("D or more") of an edge-DP degree histogram when none is given: public, never
taken from the data (the data's largest degree would leak)."""

MAX_ROWS_PER_UNIT = 10_000
"""The largest `unit.max_rows` (rows one privacy unit may contribute); sensitivity grows with it."""

TARGET_LIMIT = 1e9
"""The largest accuracy target: a margin of error beyond a billion people asks for no accuracy."""

# --- data size (issue 11, part 4): checked from file metadata before anything is decoded ---

MAX_DATA_MB = 2048
"""The largest data a command reads, in MB (10^6 bytes), by default: the larger of the bytes on
disk and the decoded size the file's metadata announces (Parquet rows × columns × 8 bytes;
xlsx cells × their shared strings' length). `--max-data-mb` sets another limit."""

MAX_ROWS = 100_000_000
"""The most rows a command reads by default, counted from metadata before reading (Parquet
row groups, the xlsx sheet's rows) and while streaming (CSV). `--max-rows` sets another
limit: a census of 330 M persons passes `--max-rows 400000000`."""

DECODED_BYTES_PER_VALUE = 8
"""The least a decoded value costs in memory (a float64 or an offset + index): the lower
bound of a Parquet file's decoded size is rows × columns read × this."""

MAX_RECORD_COLUMNS = 10_000
"""The most columns read whole, i.e. every column of every record: a release charged to a
ledger (its key fingerprints whole records) and a file opened in the dashboard (its Data page
shows every column). Known from the header (or the metadata) before a record is read. Arrow's
CSV reader costs about 100 µs and 10 KB per column whatever the rows: one line of 100,000
columns (0.9 MB) took 10 s and 0.9 GB. Census microdata have hundreds (the ACS person file
about 500). An uncharged count reads only the plan's columns and has no such limit."""

MAX_VALUE_LABEL = 200
"""The longest codebook label of one code (a plan's `labels:`), in characters: long enough for
"Native Hawaiian and Other Pacific Islander alone", short enough for a chart's axis."""

QUANTILE_MAX_CANDIDATES = 10_001
"""The most candidate values of a quantile statistic: (hi − lo)/resolution + 1. The exponential
mechanism scores every candidate in every cell, and its rank error grows with ln(candidates)."""

AUTO_CELL_ROWS = 100
"""`method: auto` (issue 38.3) without a public `min_cell_rows`: the cell size its expected errors
assume, a small cell. Small is the conservative case: the methods that need no clamping bounds
(smooth sensitivity, sample and aggregate) lose most where cells are small, so without a
public size auto keeps the bounded method unless it wins even there."""
MAX_CELL_ROWS = 10**12
"""The largest `min_cell_rows` a plan may declare."""

# --- the work of a plan (issue 25, point 1): estimated from the plan alone, before it runs ---

PLD_MAX_POINTS = 400_000
"""The most noise values (±⌈11.6σ⌉ per distinct σ, all σ's together) that one PLD certificate
of approx's discrete Gaussians lays out (~80 bytes each, ~50 ms per 100,000 at each step of the
factor search). Above it (σ's of thousands: a budget of ε ≈ 0.001) the zCDP bound certifies
instead."""

PLD_MAX_WIDTH = 2_000_000
"""The widest composed PLD (grid steps of 1e-3 in privacy loss, an upper bound) a certificate
composes by FFT. Above it (many measurements with σ below 1: ε near 100) the zCDP bound
certifies instead."""

STRATEGY_MAX_ENTRIES = 250_000
"""The largest exact error model `strategy: auto` builds: residual subsets × hierarchy levels
× candidate marginals, counted from the tables' columns before anything is built (2 MB; about
4 ms per evaluation of the workload error, 60 ms to build). Beyond it the tables' own marginals
are the candidates, and beyond that the tables are measured as listed (one table over 10
two-valued columns has 2^10 × 2^10 = 1,048,576)."""

STRATEGY_MAX_SUBSETS = 4_096
"""The most residual subsets (of the plain columns inside some table) the strategy's error
model has: each is built in Python (~10 µs) and is a row of every evaluation. One table over
k two-valued columns has 2^k; beyond 12 columns the tables are measured as listed."""

STRATEGY_WORK = 700_000_000
"""The estimated work (in ns on this kind of machine) of one search for the strategy's budget
shape; a plan makes about six (per accountant, and the tables as listed to compare). A search
that reaches it keeps the best shape found: valid, perhaps less accurate than the optimum."""

# --- synthetic microdata (issue 27): bounded from the plan, before any noise is drawn ---

MAX_SYNTHETIC_CELLS = 10_000_000
"""The most cells of the synthetic model's cliques together (`postprocess.synthetic`). When the
tables form no cycle the cliques are tables, within `MAX_CELLS`; a cycle joins tables into
larger cliques (age × sex, sex × race, race × age → age × sex × race), whose fit keeps a few
float64 copies of each: 10 M cells stay well under a gigabyte."""

MAX_SYNTHETIC_ROWS = 20_000_000
"""The most rows (persons) the synthetic microdata may hold: each row costs a few bytes per
column in memory and about 40 bytes of CSV; 1 M rows take seconds and ~100 MB. Checked
against the data's rows read before the noise is drawn, as `MAX_ROWS` is."""

LDP_ITEMSETS_MAX_MB = 32
"""The most text (MB of UTF-8) the distinct answers of an `ldp itemsets` column may hold:
their items are split, encoded and deduplicated in memory, about 18 MB of memory and 0.12 s
per MB of answers here (2,000 answers of 1,000 items, 22 MB: 3.4 s and 570 MB). Checked
after the column is read, before any item is parsed (issue 35, finding 7)."""

SYNTHETIC_IPF_ROUNDS = 500
"""The most rounds of iterative proportional fitting of a synthetic model's clique (fewer when
it converges, or when `SYNTHETIC_FIT_WORK` allows fewer)."""

SYNTHETIC_FIT_WORK = 500_000_000
"""The most cell updates the fit of a synthetic model may take (rounds × Σ over the fitted
cliques of their cells × (tables inside + 1)), about 7 ns each here: some 3.5 s. Counted from
the plan before any noise (issue 35, finding 5: 18 two-valued columns with every pair a table
took over 300 s). Fewer rounds are run where they fit, at least SYNTHETIC_MIN_ROUNDS."""

SYNTHETIC_MIN_ROUNDS = 20
"""Fewer rounds than this would leave a cycle's tables far from their released counts: such a
model is refused instead."""

SYNTHETIC_FIT_BYTES = 512_000_000
"""The most memory the cell maps of one fitted clique hold (8 bytes per cell per table inside
it, plus the separator's): 20 two-valued columns with every pair a table needed 1.6 GB."""

# --- admission (issue 35): every command's work, estimated before it starts ---

ADMISSION_WORK_NS = 4_000_000_000
"""The most estimated work (ns on this kind of machine) of the stages of one command that
depend on the plan (strategy, consistency, accuracy, synthetic fit, statistics), the data's
reading aside: a small plan answers within about 5 s of CPU or is refused in one line
(`dprelease.admission`)."""

ADMISSION_MEMORY_BYTES = 1_000_000_000
"""The most estimated memory of those stages together."""

CONSISTENCY_WORK_NS = 4_000_000_000
"""The most estimated work of one consistent post-processing of the released tables
(conjugate-gradient products over the constraints, its active-set rounds and the controlled
rounding): beyond it the plan is refused at `plan`, before any noise, with what to change."""

ACCURACY_WORK_NS = 3_000_000_000
"""The estimated work the accuracy simulation may take: its reruns of the post-processing are
as many as fit (at least one, at most `postprocess.accuracy.DEFAULT_SIMULATIONS`), counted
from the plan, never timed (issue 35, finding 9: 220 three-way tables took 25 s in it)."""
