"""Side by side (issue 38.6): synthetic microdata with their own budget share against
`synthetic: true` (no extra budget), on pairs of columns that no table holds.

Two workloads at ε = 1 (zcdp, δ = 1e-10, every post-processing step): the bundled sample plan
on data/census_sample.csv (income in no table; tenure × household size joined to nothing),
and a sparse plan on a generated sample (`write_sample`, 50,000 rows) whose four tables
(state, county × sex, age × sex, race × hispanic) leave education, tenure, household size
and income out. Each runs `postprocess.synthetic: {budget_share: 0.2}` against
`synthetic: true` through the release's own steps (allocation, draw, post-processing,
synthesis), with the preview sampler (the same laws as the release's secure samplers,
seeded so that runs repeat). Metrics, averaged over seeds, against the data's true counts:

- "off TV": the mean 2-way total variation Σ|x̂ − x|/2n over the pairs of columns no table
  determines. Without a share the microdata lack the columns no table holds, so the peer's
  pairs are the ones it can answer; the share's figure over those same pairs is listed too;
- "linked TV": the same over the three most dependent such pairs of at most 200 cells
  (largest TV between the true joint and the product of its margins; county's pairs, of
  hundreds of sparse cells, look dependent by sampling alone); the peer's unanswerable pairs
  count as independence of the TRUE margins, more than it could give (it has no margin);
- "tables RMSE": the published tables' mean RMSE per cell (the share's cost to them).

Against OpenDP's MST and AIM (`opendp[mbi]`) pair by pair: `bench/synthetic_pairs.py`, which
runs them (minutes each) in the venv that has them and caches their records; when that cache
is present (`/tmp/sbs38`), `rows()` adds one row per workload for every pair and for the
linked pairs, the peer being the better of the two (mean TV), with the pairs ahead, level and
behind in the row's name.

    python bench/sbs_synthetic.py [--quick]
"""

from __future__ import annotations

import copy
import itertools
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dprelease.data.count import count, load_data
from dprelease.plan.model import Plan
from dprelease.plan.parse import parse_plan
from dprelease.plan.subtables import closure, determines
from dprelease.release.draw import draw_preview
from dprelease.sample.generator import sample_plan_dict, write_sample

ROOT = Path(__file__).resolve().parent.parent
SHARE = 0.2
EPSILON = 1.0
SPARSE_TABLES = ("total", "state", "county_by_sex", "age_by_sex", "race_by_hispanic")
PEER = "dprelease synthetic: true (no share)"
MBI_CACHE = Path("/tmp/sbs38")  # MST's and AIM's records (`synthetic_pairs.py`)
MAX_LINKED_CELLS = 200  # county pairs (hundreds of sparse cells) look linked by sampling alone


def _plan(raw: dict[str, Any], synthetic: Any) -> Plan:
    raw = copy.deepcopy(raw)
    raw["budget"] = {"accounting": "zcdp", "epsilon": EPSILON, "delta": 1e-10}
    raw["postprocess"] = {"clamp": [0, None], "synthetic": synthetic}
    return parse_plan(raw)


def _tv(estimate: np.ndarray, truth: np.ndarray) -> float:
    return float(np.abs(estimate / estimate.sum() - truth / truth.sum()).sum() / 2)


def _pairs(plan: Plan) -> list[tuple[str, str]]:
    """Pairs of declared columns no table determines (a column and its ancestor left out)."""
    schema = plan.schema
    out = []
    for a, b in itertools.combinations(schema.names, 2):
        if a in closure(schema, (b,)) or b in closure(schema, (a,)):
            continue
        if not any(determines(schema, spec.by, (a, b)) for spec in plan.tables):
            out.append((a, b))
    return out


def _truth(encoded: Any, plan: Plan, pair: tuple[str, str]) -> np.ndarray:
    schema = plan.schema
    a, b = (encoded.codes[n].astype(np.int64) for n in pair)
    keep = (a >= 0) & (b >= 0)
    cells = schema[pair[0]].size * schema[pair[1]].size
    index = a[keep] * schema[pair[1]].size + b[keep]
    return np.bincount(index, minlength=cells).astype(np.float64)


def measure(raw: dict[str, Any], seeds: int) -> dict[str, float]:
    shared, plain = _plan(raw, {"budget_share": SHARE}), _plan(raw, True)
    encoded = load_data(shared.data_path, shared)  # type: ignore[arg-type]
    truth = count(encoded, shared)
    pairs = _pairs(shared)
    true_pairs = {p: _truth(encoded, shared, p) for p in pairs}

    def dependence(p: tuple[str, str]) -> float:
        joint = true_pairs[p].reshape(shared.schema[p[0]].size, -1)
        return _tv(np.outer(joint.sum(1), joint.sum(0)).ravel(), true_pairs[p])

    small = [p for p in pairs if true_pairs[p].size <= MAX_LINKED_CELLS]
    linked = sorted(small, key=dependence, reverse=True)[:3]
    sums: dict[str, list[float]] = {}
    for seed in range(seeds):
        for label, plan in (("share", shared), ("plain", plain)):
            preview = draw_preview(plan, truth, rng=np.random.default_rng(seed))
            microdata = preview.microdata
            assert microdata is not None
            answered = [p for p in pairs if set(p) <= set(microdata.columns)]

            def tv(p: tuple[str, str], m: Any = microdata, plan: Plan = plan) -> float:
                if not set(p) <= set(m.columns):  # unanswerable: independence of the margins
                    joint = true_pairs[p].reshape(shared.schema[p[0]].size, -1)
                    return _tv(np.outer(joint.sum(1), joint.sum(0)).ravel(), true_pairs[p])
                return _tv(m.tabulate(plan.schema, p).astype(np.float64), true_pairs[p])

            rmse = np.mean(
                [
                    math.sqrt(np.mean((t.released_counts - truth.counts[t.name]) ** 2))
                    for t in preview.tables
                ]
            )
            values = {
                "off": float(np.mean([tv(p) for p in answered])),
                "linked": float(np.mean([tv(p) for p in linked])),
                "rmse": float(rmse),
                "pairs": float(len(answered)),
            }
            if label == "share":
                plain_answered = [p for p in pairs if set(p) <= set(plain.used_columns)]
                values["off_common"] = float(np.mean([tv(p) for p in plain_answered]))
            for key, value in values.items():
                sums.setdefault(f"{label}_{key}", []).append(value)
    out = {key: float(np.mean(v)) for key, v in sums.items()}
    out["linked_pairs"] = " ".join("×".join(p) for p in linked)  # type: ignore[assignment]
    out["all_pairs"] = float(len(pairs))
    return out


def _workloads(folder: Path) -> dict[str, dict[str, Any]]:
    generated = folder / "sparse.csv"
    write_sample(generated, 50_000, seed=38)
    sparse = sample_plan_dict(str(generated))
    sparse["tables"] = [t for t in sparse["tables"] if t["name"] in SPARSE_TABLES]
    return {
        "sample plan": sample_plan_dict(str(ROOT / "data" / "census_sample.csv")),
        "sparse plan": sparse,
    }


def _against_mbi(name: str, raw: dict[str, Any], seeds: int) -> list[dict[str, Any]]:
    """Rows against MST and AIM from their cached records (none without the cache)."""
    from synthetic_pairs import per_pair, summary

    pairs = per_pair(name, raw, seeds, None, MBI_CACHE)
    if not any("verdict" in p for p in pairs):
        return []
    found = []
    for label, linked in (("every off-table pair", False), ("linked pairs", True)):
        m = summary(pairs, linked)
        peer = min(m["mst"], m["aim"])
        found.append({
            "comparison": f"synthetic share vs MST/AIM, {name}: {label} ({m['pairs']}; "
                          f"ahead {m['ahead']}, level {m['level']}, behind {m['behind']})",
            "metric": "mean TV", "dprelease": m["dprelease"], "peer": peer, "goal": peer,
            "peer_name": f"OpenDP MST {m['mst']:.4f} / AIM {m['aim']:.4f} (better shown)",
        })  # fmt: skip
    return found


def rows(quick: bool) -> list[dict[str, Any]]:
    seeds = 2 if quick else 5
    found = []
    with tempfile.TemporaryDirectory() as folder:
        for name, raw in _workloads(Path(folder)).items():
            m = measure(raw, seeds)
            common = f"{int(m['plain_pairs'])} of {int(m['all_pairs'])} pairs"
            found += [
                {"comparison": f"synthetic share, {name}: off-table 2-way TV ({common})",
                 "metric": "mean TV", "dprelease": m["share_off_common"],
                 "peer": m["plain_off"], "goal": m["plain_off"]},
                {"comparison": f"synthetic share, {name}: every off-table pair "
                               f"({int(m['share_pairs'])} pairs; peer answers {common})",
                 "metric": "mean TV", "dprelease": m["share_off"], "peer": math.nan,
                 "goal": math.nan},
                {"comparison": f"synthetic share, {name}: most linked pairs ({m['linked_pairs']})",
                 "metric": "mean TV", "dprelease": m["share_linked"],
                 "peer": m["plain_linked"], "goal": m["plain_linked"]},
                {"comparison": f"synthetic share, {name}: published tables (share's cost)",
                 "metric": "mean RMSE/cell", "dprelease": m["share_rmse"],
                 "peer": m["plain_rmse"], "goal": m["plain_rmse"] * 1.2},
            ]  # fmt: skip
            found += _against_mbi(name, raw, seeds)
    for row in found:
        row.setdefault("peer_name", PEER)
        peer, goal = row["peer"], row["goal"]
        row["ahead"] = math.isnan(peer) or row["dprelease"] <= goal
    return found


if __name__ == "__main__":
    from bench_side_by_side import module_main

    module_main(rows, "no rows measured")
