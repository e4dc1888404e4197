"""The bar for `release` at scale: DuckDB's one streaming GROUPING SETS query (counts only).

Reads the benchmark workload's columns of a CSV or Parquet file (or folder of parts) once and
groups them by every table's columns in one query, as the issue measured it. No domains,
no noise, no files written. Usage: python bench/duckdb_grouping_sets.py DATA
"""

import sys
from pathlib import Path

import duckdb

WORKLOAD = [
    ["state"], ["age"], ["sex"], ["race"], ["education"],
    ["state", "sex"], ["age", "sex"], ["race", "hispanic"], ["education", "sex"],
    ["state", "race", "hispanic"], ["county", "sex"],
]  # fmt: skip


def main(path: str) -> None:
    columns = sorted({c for by in WORKLOAD for c in by})
    if Path(path).is_dir():
        relation = f"read_parquet('{path}/**/*.parquet')"
    elif path.endswith(".parquet"):
        relation = f"read_parquet('{path}')"
    else:
        relation = f"read_csv('{path}', all_varchar = true)"
    sets = ", ".join("(" + ", ".join(by) + ")" for by in WORKLOAD)
    query = (
        f"SELECT {', '.join(columns)}, count(*) AS n FROM (SELECT {', '.join(columns)} "
        f"FROM {relation}) GROUP BY GROUPING SETS ({sets}, ())"
    )
    groups = duckdb.sql(query).fetchall()
    print(f"{len(groups)} groups")


if __name__ == "__main__":
    main(sys.argv[1])
