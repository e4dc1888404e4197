"""Admission's resource bound on random small releases (issue 35), many more than the test.

    python bench/bench_admission.py [PLANS] [SEED] [INPUTS]

Draws PLANS random plans (default 100; tests/helpers/random_releases.py: tables under every
accountant and strategy, statistics of every kind and method, invariants, structural zeros,
synthetic microdata, hierarchies; at most 10 KB) with up to 10,000 rows each, and runs `plan`
(parse, admit, allocate) and `release` (no ledger, the library's one release flow) of each in
a forked child: the kernel's CPU time and peak memory growth. Then INPUTS (default 20) random
edge lists and answer files (tests/helpers/random_stages.py, up to 10,000 rows; the answers'
--max-length up to 64) through `graph` and `ldp` as the command line runs them. Prints how
many were answered and refused, the CPU quantiles, the slowest inputs of each command, and per
admitted stage the slowest plans or inputs (with the path its estimator chose, the estimate
and the measured CPU).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dprelease.accounting.dgauss_pld import _pld_module  # noqa: E402
from dprelease.admission import Estimate  # noqa: E402
from dprelease.errors import DPReleaseError  # noqa: E402
from dprelease.plan.parse import parse_plan  # noqa: E402
from dprelease.release.admitted import RELEASE_STAGES, admit_release  # noqa: E402
from dprelease.release.noise import warm_up  # noqa: E402
from dprelease.release.sources import FileData  # noqa: E402
from helpers import random_releases as rr  # noqa: E402
from helpers import random_stages as rs  # noqa: E402
from helpers.resources import ChildRun, in_child  # noqa: E402


def summary(raw: dict) -> str:
    budget = raw["budget"]
    kinds = [
        next(iter(t["stat"])) + "/" + t["stat"].get("method", "-")
        for t in raw["tables"]
        if "stat" in t
    ]
    counts = [len(t["by"]) for t in raw["tables"] if "stat" not in t]
    extra = [k for k in ("structural_zeros",) if k in raw]
    extra += ["synthetic"] if raw["postprocess"].get("synthetic") else []
    extra += ["invariant"] if any(t.get("invariant") for t in raw["tables"]) else []
    widths = ", ".join(f"{counts.count(w)}×{w}" for w in sorted(set(counts)))
    return (
        f"{budget['accounting']}/{budget['strategy']} ε={budget['epsilon']:g}; "
        f"domains {[len(c['domain']) for c in raw['columns'].values()]}; "
        f"{len(counts)} tables ({widths} columns); stats {kinds}; {' '.join(extra)}; "
        f"{rr.plan_bytes(raw)} B"
    )


def _estimate(argv: list[str]) -> Estimate | None:
    """What admission estimated for a `graph` or `ldp` command (None: it refused)."""
    from dprelease.admission import file_size
    from dprelease.graph.cost import GraphTask, admit_graph
    from dprelease.ldp.cost import LdpTask, admit_ldp

    try:
        if argv[0] == "graph":
            k = int(argv[argv.index("--k-degree") + 1]) if "--k-degree" in argv else None
            bound = int(argv[argv.index("--max-degree") + 1]) if "--max-degree" in argv else 100
            task = GraphTask(k=k, max_degree=bound, node_dp="--node-dp" in argv)
            return admit_graph(task, file_size(argv[1])).estimates[0]
        length = int(argv[argv.index("--max-length") + 1]) if "--max-length" in argv else 16
        return admit_ldp(LdpTask(argv[1], length), file_size(argv[2])).estimates[0]
    except DPReleaseError:
        return None


def _command(argv: list[str]) -> str:
    if argv[0] == "graph":
        return "graph --k-degree" if "--k-degree" in argv else "graph --degree-histogram"
    return f"ldp {argv[1]}"


def stages_without_a_plan(count: int, draw: random.Random, folder: Path) -> None:
    """`graph` and `ldp` on random inputs: the slowest per command, estimate beside."""
    runs: dict[str, list[tuple[ChildRun, list[str], Estimate | None, int]]] = {}
    for i in range(count):
        commands = rs.random_graph(draw.randint, draw.choice, folder / f"edges{i}.csv")
        answers = folder / f"answers{i}.csv"
        commands += rs.random_answers(draw.randint, draw.choice, answers, (4, 16, 32, 64))
        for argv in commands:
            data = Path(argv[1] if argv[0] == "graph" else argv[2])
            rows = data.read_text().count("\n") - 1
            run = in_child(lambda a=argv: rs.cli_in_process(a))
            runs.setdefault(_command(argv), []).append((run, argv, _estimate(argv), rows))
    for command, found in runs.items():
        cpu = sorted(r.cpu_seconds for r, *_ in found)
        codes = [r.code for r, *_ in found]
        print(
            f"{command}: {codes.count(0)} answered, {codes.count(2)} refused; CPU median "
            f"{statistics.median(cpu):.2f} s, max {cpu[-1]:.2f} s; peak growth max "
            f"{max(r.growth_mb for r, *_ in found):.0f} MB"
        )
        for run, argv, estimate, rows in sorted(found, key=lambda f: -f[0].cpu_seconds)[:3]:
            said = "refused" if estimate is None else f"est. {estimate.work_ns / 1e9:.2f} s"
            path = "" if estimate is None else f" ({estimate.path})"
            options = " ".join(a for a in argv[2:] if not a.startswith("/"))
            print(
                f"  {run.cpu_seconds:.2f} s exit {run.code}, {rows:,} rows, {said}{path}: {options}"
            )


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    draw = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 35)
    inputs = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    _pld_module()
    warm_up()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        while len(results) < count:
            raw, rows = rr.random_release(draw.randint, draw.choice, draw.uniform)
            if rr.plan_bytes(raw) > rr.MAX_PLAN_BYTES:
                continue
            path = Path(folder) / f"d{len(results)}.csv"
            rr.write_rows(raw, rows, path, seed=len(results))
            planned = in_child(lambda r=raw: rr.plan_in_process(r))
            released = in_child(lambda r=raw, p=path: rr.release_in_process(r, p))
            try:
                estimates = {
                    e.stage: e
                    for e in admit_release(parse_plan(raw), FileData(str(path))).estimates
                }
            except DPReleaseError:
                estimates = {}
            results.append((raw, rows, planned, released, estimates))
    for label, index in (("plan", 2), ("release", 3)):
        runs = [r[index] for r in results]
        cpu = sorted(run.cpu_seconds for run in runs)
        codes = [run.code for run in runs]
        print(
            f"{label}: {codes.count(0)} answered, {codes.count(2)} refused, "
            f"{len(codes) - codes.count(0) - codes.count(2)} failed; CPU median "
            f"{statistics.median(cpu):.2f} s, 90th {cpu[int(0.9 * (len(cpu) - 1))]:.2f} s, "
            f"max {cpu[-1]:.2f} s; peak growth max {max(r.growth_mb for r in runs):.0f} MB"
        )
        for raw, rows, *_ in sorted(results, key=lambda r: -r[index].cpu_seconds)[:3]:
            run = _[index - 2]
            print(f"  {run.cpu_seconds:.2f} s exit {run.code}, {rows:,} rows: {summary(raw)}")
    for stage in RELEASE_STAGES:  # per stage: the costliest estimates, and the slowest plans
        having = [r for r in results if stage in r[4]]
        costly = sorted(having, key=lambda r: -r[4][stage].work_ns)[:2]
        slowest = sorted(having, key=lambda r: -r[3].cpu_seconds)[:2]
        for label, chosen in (("costliest", costly), ("slowest", slowest)):
            for raw, _rows, _, released, estimates in chosen:
                e = estimates[stage]
                print(
                    f"{stage} ({label}): est. {e.work_ns / 1e9:.2f} s ({e.path}); release "
                    f"{released.cpu_seconds:.2f} s exit {released.code}: {summary(raw)}"
                )
    with tempfile.TemporaryDirectory() as folder:
        stages_without_a_plan(inputs, draw, Path(folder))


if __name__ == "__main__":
    main()
