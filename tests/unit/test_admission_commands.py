"""Issue 35: one admission for every command. Every stage registers one estimator, in its own
module; every command that does work asks `admit` first and refuses an over-limit input in one
line (exit 2) before it reads the data, allocates, draws or charges anything; `release` admits
before the allocation it runs in the background."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

import dprelease.graph.cost
import dprelease.ldp.cost
import dprelease.release.admitted
import dprelease.risk.cost
import dprelease.sample.cost  # noqa: F401  (with the above: every stage's module)
from dprelease import admission
from dprelease.admission import DataSize, Estimate
from dprelease.ledger.store import Ledger
from helpers.cli import run as run_cli

# Each stage and the package whose module registers it: one estimator, in the stage's own home.
EXPECTED_STAGES = {
    "plan": "dprelease.plan",
    "count": "dprelease.data",
    "strategy": "dprelease.strategy",
    "statistics": "dprelease.release",
    "consistency": "dprelease.postprocess",
    "accuracy": "dprelease.postprocess",
    "synthetic": "dprelease.synthetic",
    "preview": "dprelease.release",
    "graph": "dprelease.graph",
    "ldp": "dprelease.ldp",
    "risk": "dprelease.risk",
    "reconstruct": "dprelease.risk",
    "sample": "dprelease.sample",
}


def test_every_stage_is_registered_once_from_its_own_package() -> None:
    assert set(admission.STAGES) == set(EXPECTED_STAGES)
    for stage, package in EXPECTED_STAGES.items():
        assert admission.STAGES[stage].__module__.startswith(package + "."), stage


# --- every command refuses through admission before its work --------------------------------

EDGES = "from,to\na,b\nb,c\nc,d\nd,a\na,c\n"
ROWS = "sex,lang,age\n" + "".join(f"{'FM'[i % 2]},en;fr,{20 + i % 50}\n" for i in range(60))
GEO_PLAN = """\
data: data.csv
columns:
  state: {kind: categorical, domain: [S1, S2]}
  county: {kind: categorical, domain: [C1, C2, C3], parent: state,
           parent_map: {C1: S1, C2: S1, C3: S2}}
  sex: {kind: categorical, domain: [F, M]}
tables:
  - {name: by_county_sex, by: [county, sex]}
budget: {epsilon: 1}
"""


def _files(folder: Path) -> dict[str, str]:
    (folder / "edges.csv").write_text(EDGES)
    (folder / "rows.csv").write_text(ROWS)
    (folder / "plan.yaml").write_text(GEO_PLAN)
    rows = "".join(
        f"{c},{'S1' if c != 'C3' else 'S2'},{'FM'[i % 2]}\n"
        for i, c in enumerate(["C1", "C2", "C3"] * 20)
    )
    (folder / "data.csv").write_text("county,state,sex\n" + rows)
    return {name: str(folder / name) for name in ("edges.csv", "rows.csv", "plan.yaml")}


# (the argv, the stage that must refuse it, the work that must not start: module, name)
COMMANDS: list[tuple[str, Callable[[dict[str, str], Path], list[str]], str, str, str]] = [
    (
        "plan",
        lambda f, o: ["plan", f["plan.yaml"]],
        "consistency",
        "dprelease.stats.allocation",
        "allocate",
    ),
    (
        "validate",
        lambda f, o: ["validate", f["plan.yaml"]],
        "strategy",
        "dprelease.stats.allocation",
        "allocate",
    ),
    (
        "release",
        lambda f, o: ["release", f["plan.yaml"], "--out", str(o / "out")],
        "count",
        "dprelease.stats.allocation",
        "allocate",
    ),
    (
        "sample",
        lambda f, o: ["sample", "--rows", "10", "--out", str(o / "s.csv")],
        "sample",
        "dprelease.sample.generator",
        "write_sample",
    ),
    (
        "graph --k-degree",
        lambda f, o: ["graph", f["edges.csv"], "--k-degree", "2"],
        "graph",
        "dprelease.graph.edges",
        "read_edges",
    ),
    (
        "graph --degree-histogram",
        lambda f, o: [
            "graph",
            f["edges.csv"],
            "--degree-histogram",
            "--epsilon",
            "1",
            "--out",
            str(o / "g"),
        ],
        "graph",
        "dprelease.graph.edges",
        "read_edges",
    ),
    (
        "ldp heavy-hitters",
        lambda f, o: ["ldp", "heavy-hitters", f["rows.csv"], "--column", "sex", "--epsilon", "2"],
        "ldp",
        "dprelease.data.read",
        "read_data",
    ),
    (
        "ldp itemsets",
        lambda f, o: ["ldp", "itemsets", f["rows.csv"], "--column", "lang", "--epsilon", "2"],
        "ldp",
        "dprelease.data.read",
        "read_data",
    ),
    (
        "ldp simulate",
        lambda f, o: [
            "ldp",
            "simulate",
            f["rows.csv"],
            "--column",
            "sex",
            "--protocol",
            "GRR",
            "--epsilon",
            "2",
        ],
        "ldp",
        "dprelease.data.read",
        "read_data",
    ),
    (
        "risk",
        lambda f, o: ["risk", f["rows.csv"], "--qi", "sex", "age", "--sensitive", "lang"],
        "risk",
        "dprelease.data.read",
        "read_data",
    ),
    (
        "reconstruct",
        lambda f, o: ["reconstruct", f["plan.yaml"]],
        "reconstruct",
        "dprelease.data.count",
        "load_data",
    ),
]


@pytest.mark.parametrize(
    ("argv", "stage", "module", "work"),
    [pytest.param(a, s, m, w, id=name) for name, a, s, m, w in COMMANDS],
)
def test_every_command_refuses_through_admission_before_its_work(
    argv, stage, module, work, tmp_path, monkeypatch, ledger_file
) -> None:
    """The stage's estimator is swapped for one over every limit: the command must say so in
    one line naming the stage's limit, exit 2, and never start its work."""
    files = _files(tmp_path)
    asked: list[str] = []

    def over_limit(task: object, data: DataSize) -> Estimate:
        asked.append(stage)
        return Estimate(stage, 10**13, 0, "TEST_LIMIT")

    def never(*args: object, **kwargs: object) -> None:
        pytest.fail(f"{work} ran before admission refused")

    monkeypatch.setitem(admission.STAGES, stage, over_limit)
    monkeypatch.setattr(f"{module}.{work}", never)
    result = run_cli(*argv(files, tmp_path))
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"{stage} (TEST_LIMIT)" in errors[0], result.stderr
    assert asked == [stage]
    assert not (tmp_path / "out").exists() and not (tmp_path / "g").exists()
    assert not (tmp_path / "s.csv").exists() and not ledger_file.exists()


# Commands that run no stage: what they do is bounded without a plan's or a file's work
# (and `ldp plan`: arithmetic on its three numbers, no data).
EXEMPT = {
    "codebook": "reads a data file's declared labels only (its own size limits)",
    "ledger": "reads and writes the ledger's few rows",
    "export": "writes code; runs none of it",
}


def test_every_command_is_admitted_or_exempt_for_a_reason() -> None:
    """A new subcommand must join COMMANDS (admitted, tested above) or EXEMPT (said why)."""
    from dprelease.cli import _parser

    commands = set(_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    admitted = {name.split()[0] for name, *_ in COMMANDS}
    assert commands == admitted | set(EXEMPT)


# --- real over-limit inputs --------------------------------------------------------------------


def _triples_plan(folder: Path) -> Path:
    names = [f"c{i}" for i in range(16)]
    lines = ["data: data.csv", "columns:"]
    lines += [f"  {c}: {{kind: categorical, domain: [a, b]}}" for c in names]
    lines.append("tables:")
    for combo in itertools.combinations(names, 3):
        lines.append(f"  - {{name: {'_'.join(combo)}, by: [{', '.join(combo)}]}}")
    (folder / "data.csv").write_text(",".join(names) + "\n" + ("a," * 15 + "b\n") * 50)
    path = folder / "plan.yaml"
    path.write_text("\n".join([*lines, "budget: {epsilon: 1}"]) + "\n")
    return path


def test_release_admits_before_the_background_allocation_and_charges_nothing(
    tmp_path, monkeypatch, ledger_file
) -> None:
    """560 three-way tables: consistency's work is over CONSISTENCY_WORK_NS. The CLI used to
    start the allocation on another thread before the service admitted the plan."""
    started: list[str] = []
    from dprelease.release import service
    from dprelease.stats import allocation

    real_allocate = allocation.allocate

    def allocate(plan):  # type: ignore[no-untyped-def]
        started.append("allocate")
        return real_allocate(plan)

    monkeypatch.setattr(allocation, "allocate", allocate)
    for name in ("charged_release", "draw_release"):
        monkeypatch.setattr(service, name, lambda *a, _n=name, **k: started.append(_n))
    out = tmp_path / "out"
    result = run_cli("release", str(_triples_plan(tmp_path)), "--out", str(out))
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "CONSISTENCY_WORK_NS" in errors[0], result.stderr
    assert started == [] and not out.exists()
    assert not ledger_file.exists() or Ledger(ledger_file).datasets() == []


def test_reconstruct_refuses_a_record_space_it_cannot_hold_before_reading(
    tmp_path, monkeypatch
) -> None:
    """100 areas × 1.5 M record kinds of true counts (1.2 GB) would not fit ADMISSION_MEMORY."""
    plan = GEO_PLAN.replace(
        "  sex: {kind: categorical, domain: [F, M]}",
        "  sex: {kind: categorical, domain: [F, M]}\n"
        "  a: {kind: categorical, domain: {range: [1, 150]}}\n"
        "  b: {kind: categorical, domain: {range: [1, 100]}}\n"
        "  c: {kind: categorical, domain: {range: [1, 50]}}",
    )
    counties = ", ".join(f"K{i}" for i in range(200))
    parents = ", ".join(f"K{i}: S{1 + i % 2}" for i in range(200))
    plan = plan.replace("domain: [C1, C2, C3], parent: state,", f"domain: [{counties}],")
    plan = plan.replace(
        "parent_map: {C1: S1, C2: S1, C3: S2}}", f"parent: state, parent_map: {{{parents}}}}}"
    )
    plan = plan.replace(  # rebuilt: sex × a × b × c = 1.5 M kinds, under MAX_RECORD_TYPES
        "  - {name: by_county_sex, by: [county, sex]}",
        "  - {name: ab, by: [county, a, b]}\n  - {name: c_sex, by: [county, c, sex]}",
    )
    (tmp_path / "plan.yaml").write_text(plan)
    (tmp_path / "data.csv").write_text("county,state,sex,a,b,c\nK1,S1,F,1,1,1\n")

    def never(*args: object, **kwargs: object) -> None:
        pytest.fail("the data were read before admission refused")

    monkeypatch.setattr("dprelease.data.count.load_data", never)
    result = run_cli("reconstruct", str(tmp_path / "plan.yaml"))
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "ADMISSION_MEMORY_BYTES" in errors[0], result.stderr
    assert "reconstruct (MAX_RECORD_TYPES)" in errors[0]


def test_sample_refuses_more_rows_than_its_limit_before_writing(tmp_path) -> None:
    out = tmp_path / "s.csv"
    result = run_cli("sample", "--rows", "30000000", "--out", str(out))
    assert result.returncode == 2 and "between 1 and 20,000,000 rows" in result.stderr
    assert not out.exists()


def test_itemsets_path_follows_the_file_size() -> None:
    """A file of at most LDP_ITEMSETS_MAX_MB is parsed whole; a larger one is read, and its
    distinct answers' text checked, before any item is parsed."""
    from dprelease.ldp.cost import LdpTask, admit_ldp

    small = admit_ldp(LdpTask("itemsets"), DataSize(bytes=1_000_000))
    large = admit_ldp(LdpTask("itemsets"), DataSize(bytes=500_000_000))
    assert "parsed whole" in small.path("ldp")
    assert "checked against LDP_ITEMSETS_MAX_MB" in large.path("ldp")
