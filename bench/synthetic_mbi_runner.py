"""OpenDP's AIM or MST (`opendp[mbi]`) on coded data: run by `bench_synthetic.py` in the venv
that has them (`/work/venv-mbi`), as a subprocess, because `mbi` and jax are not dprelease's
requirements.

    python synthetic_mbi_runner.py IN.npz OUT.npy

IN.npz holds `codes` (rows × columns, int), `columns`, `sizes`, `rho`, `algorithm` ("aim" or
"mst"), and `queries` (the workload, one "a,b" text per table; AIM's workload). OUT.npy gets
the synthetic records' codes (rows × columns), made by the fitted model's `synthesize()`.
"""

from __future__ import annotations

import sys
import time

import numpy as np


def _step_back_further() -> None:
    """OpenDP 0.16's MST splits its ρ with `prior` (one ulp below) and its compositor can still
    find the last part one ulp over ("insufficient budget for query: 0.0013241259507327430 >
    0.0013241259507327427"): make each part a billionth smaller instead (less than ρ, never
    more)."""
    from opendp.extras.mbi import _mst, _table, _utilities

    def prior(x: float) -> float:
        return float(np.nextafter(x, -np.inf)) * (1 - 1e-9)

    _utilities.prior = prior
    _mst.prior = prior  # type: ignore[attr-defined]
    _table.prior = prior  # type: ignore[attr-defined]


def main(source: str, target: str) -> None:
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    _step_back_further()
    given = np.load(source, allow_pickle=False)
    columns = [str(c) for c in given["columns"]]
    sizes = [int(s) for s in given["sizes"]]
    rho = float(given["rho"])
    algorithm_name = str(given["algorithm"])
    frame = pl.LazyFrame({c: given["codes"][:, i].astype(np.int64) for i, c in enumerate(columns)})
    keys = {c: list(range(size)) for c, size in zip(columns, sizes, strict=True)}
    start = time.perf_counter()
    table = None
    # OpenDP 0.16's MST can refuse its own last step by one ulp of budget ("insufficient
    # budget for query: 0.000662…2 > 0.000662…1"): retry with ρ a hair smaller and its
    # measure split nudged (the split's float arithmetic decides the ulp); never more than ρ
    for shrink, split in ((0.0, 0.9), (1e-9, 0.9 - 1e-7), (1e-6, 0.89), (1e-4, 0.8)):
        if algorithm_name == "aim":
            queries = [dp.mbi.Count(tuple(q.split(","))) for q in given["queries"] if q]
            rounds = int(given["rounds"]) if "rounds" in given else None
            algorithm = dp.mbi.AIM(queries=queries, rounds=rounds)
        else:
            algorithm = dp.mbi.MST(measure_split=split)
        spend = rho * (1 - shrink)
        context = dp.Context.compositor(
            data=frame,
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(rho=rho),
        )
        try:
            query = context.query(rho=spend).select(columns)
            table = query.contingency_table(keys=keys, algorithm=algorithm).release()
            break
        except dp.OpenDPException as error:
            if "insufficient budget" not in str(error):
                raise
            print(f"{algorithm}: {error}; retrying with a smaller ρ", file=sys.stderr)
    if table is None:
        raise SystemExit(f"{algorithm}: OpenDP refused every ρ")
    fitted = time.perf_counter() - start
    synthetic = table.synthesize()
    # the null category OpenDP adds to every key set comes back as null: code -1 (no cell)
    codes = np.stack(
        [synthetic[c].fill_null(-1).to_numpy().astype(np.int64) for c in columns], axis=1
    )
    np.save(target, codes)
    print(f"{algorithm_name}: fitted in {fitted:.1f} s, {codes.shape[0]} rows", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
