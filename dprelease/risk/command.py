"""The `risk` and `reconstruct` commands. Their output is CONFIDENTIAL: it goes to the data
holder's terminal only, under a first line that says so, and never into a release."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dprelease.data.formats import FORMAT_NAMES
from dprelease.errors import DataError, quote

CONFIDENTIAL = (
    "CONFIDENTIAL — disclosure risk of your own data, for you only: do not publish it; "
    "it is never part of a release."
)


def positive_int(text: str) -> int:
    """An argument type: a whole number of at least 1 (risk's k, graph's K and limits)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {quote(text)}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {quote(text)}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {quote(text)}")
    return value


def add_parsers(commands: Any) -> None:
    """Register `risk` and `reconstruct` on the CLI's subparsers."""
    risk = commands.add_parser("risk", help="CONFIDENTIAL: k-anonymity, l-diversity, t-closeness")
    risk.add_argument("data", help=f"data file ({FORMAT_NAMES})")
    risk.add_argument("--qi", nargs="+", required=True, metavar="COLUMN", help="quasi-identifiers")
    risk.add_argument("--sensitive", required=True, metavar="COLUMN", help="sensitive attribute")
    risk.add_argument("--k", type=positive_int, default=5, help="the k to reach (default 5)")
    risk.add_argument("--c", type=_positive_float, default=2.0, help="c of recursive (c, l)")
    risk.add_argument(
        "--l", type=positive_int, help="l of recursive (c, l), apart from k (default 2)"
    )
    risk.add_argument(
        "--ordered",
        nargs="+",
        action="extend",
        default=[],
        metavar="COLUMN",
        help="ordered ground distance for t-closeness (categorical columns are nominal)",
    )
    risk.add_argument("--plan", help="a plan whose bins and hierarchy suggest generalisations")
    risk.add_argument(
        "--json", action="store_true", help="print one JSON object (notices go to stderr)"
    )
    rec = commands.add_parser(
        "reconstruct", help="CONFIDENTIAL: rebuild small-area records from exact vs DP tables"
    )
    rec.add_argument("plan", help="plan file (.yaml or .json)")
    rec.add_argument("--data", help="data file (overrides the plan's `data`)")
    rec.add_argument("--level", help="geography column of the areas (default: the finest)")
    rec.add_argument(
        "--epsilon-release",
        metavar="RELEASE_DIR",
        help="attack this release's tables/*.csv instead of a preview draw",
    )
    rec.add_argument(
        "--per-area",
        action="store_true",
        help="attack every table of the plan as if it were published for each area",
    )
    rec.add_argument("--max-people", type=positive_int, default=1000, help="largest area")
    rec.add_argument("--max-areas", type=positive_int, default=100, help="areas to try")
    rec.add_argument(
        "--seconds-per-area", type=_positive_float, default=2.0, help="time limit per MILP"
    )
    rec.add_argument(
        "--json", action="store_true", help="print one JSON object (notices go to stderr)"
    )


def _fmt_share(value: float) -> str:
    return f"{value:.1%}"


def run_risk(args: argparse.Namespace) -> int:
    from dprelease.admission import file_size
    from dprelease.data.read import read_data
    from dprelease.plan.parse import load_plan
    from dprelease.risk.classes import risk_input
    from dprelease.risk.cost import RiskTask, admit_risk
    from dprelease.risk.generalise import suggest_generalisations
    from dprelease.risk.measures import DEFAULT_L, measure_risk

    path = Path(args.data)
    if not path.is_file():
        raise DataError(f"Data file '{path}' does not exist.")
    named = [*args.qi, args.sensitive]
    unknown = [c for c in args.ordered if c not in named]
    if unknown:
        raise DataError(
            f"--ordered names {', '.join(quote(c) for c in unknown)}, which is not a column "
            f"given to --qi or --sensitive ({', '.join(named)})."
        )
    admit_risk(RiskTask(len(set(named))), file_size(path))  # issue 35: before the read
    table = read_data(path, columns=list(dict.fromkeys(named)))
    plan = load_plan(args.plan) if args.plan else None
    ordered = True if args.sensitive in args.ordered else None
    data = risk_input(table, args.qi, args.sensitive, ordered=ordered, plan=plan)
    l = args.l if args.l is not None else DEFAULT_L  # noqa: E741
    report = measure_risk(data, k=args.k, c=args.c, l=l)
    suggestions, tried = suggest_generalisations(table, data, args.k, plan)
    result = report.to_dict()
    result["generalisations"] = [s.__dict__ for s in suggestions]
    if args.json:  # stdout is the JSON object alone; the notice goes to stderr
        print(CONFIDENTIAL, file=sys.stderr)
        print(json.dumps(result, indent=2))
        return 0
    print(CONFIDENTIAL)
    k = report.k
    print(f"rows {k.rows:,}  classes {k.classes:,}  k = {k.k}")
    print(f"unique records: {k.unique:,} ({_fmt_share(k.unique_share)})")
    print(f"in classes below k = {args.k}: {k.below_k:,} ({_fmt_share(k.below_k_share)})")
    print(
        f"l-diversity of '{data.sensitive.name}': distinct l = {report.l.l_distinct}, "
        f"entropy l = {report.l.l_entropy:.3g}, recursive ({args.c:g}, {l}) "
        f"{'holds' if report.l.recursive_cl else 'fails'}"
    )
    print(f"t-closeness ({report.t.ground} distance): t = {report.t.t:.3f}")
    a = report.attacks.to_dict()
    print(
        f"homogeneity attack: {a['homogeneous_rows']:,} records "
        f"({_fmt_share(a['homogeneous_share'])}) in classes that share one sensitive value"
    )
    print(
        f"skewness: {a['skewed_rows']:,} records ({_fmt_share(a['skewed_share'])}) in classes "
        "whose top value is at least twice as common as overall"
    )
    if suggestions:
        print(f"generalisations reaching k = {args.k} ({tried} tried):")
        for s in suggestions:
            levels = ", ".join(f"{c}: {lev}" for c, lev in s.levels.items())
            print(
                f"  k = {s.k}, {s.classes:,} classes, detail lost {s.precision_loss:.0%}: {levels}"
            )
    else:
        print(f"no generalisation within the search bound reaches k = {args.k}")
    return 0


def run_reconstruct(args: argparse.Namespace) -> int:
    from dprelease.admission import file_size
    from dprelease.data.count import load_data
    from dprelease.plan.parse import load_plan
    from dprelease.risk.cost import ReconstructTask, admit_reconstruct
    from dprelease.risk.reconstruct import NothingToAttack, reconstruction_attack

    plan = load_plan(args.plan)
    path = Path(args.data) if args.data else plan.data_path
    if path is None or not path.is_file():
        raise DataError("No data file: give --data FILE or set `data:` in the plan.")
    if args.epsilon_release and not Path(args.epsilon_release).is_dir():
        raise DataError(f"'{args.epsilon_release}' is not a release folder.")
    task = ReconstructTask(
        plan,
        level=args.level,
        per_area=args.per_area,
        max_areas=args.max_areas,
        seconds_per_area=args.seconds_per_area,
        release_dir=args.epsilon_release,
    )
    admit_reconstruct(task, file_size(path))  # issue 35: before the data are read
    encoded = load_data(path, plan)

    def progress(share: float, text: str) -> None:
        if not args.json:
            sys.stderr.write(f"\r{share:5.0%} {text}   ")
            sys.stderr.flush()

    try:
        result = reconstruction_attack(
            plan, encoded, **task.attack_options(), max_people=args.max_people, progress=progress
        )
    except NothingToAttack as error:  # exit 2, one line, naming this command's options
        raise DataError(
            error.message("a finer area level with --level", "a higher --max-people")
        ) from None
    if args.json:  # stdout is the JSON object alone; the notice goes to stderr
        print(CONFIDENTIAL, file=sys.stderr)
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    sys.stderr.write("\n")
    print(CONFIDENTIAL)
    for line in reconstruction_lines(result.to_dict()):
        print(line)
    return 0


def reconstruction_lines(d: dict[str, Any], areas_cap: str = "over --max-areas") -> list[str]:
    """The attack's figures as lines (the CLI and the Risk page, which names its own cap)."""
    lines = [
        f"areas: {d['level']} with 1–{d['max_people']:,} people; tried {d['areas_tried']:,} "
        f"of {d['areas_with_people']:,} (skipped: {d['areas_too_big']:,} too big, "
        f"{d['areas_not_tried']:,} {areas_cap}); {d['seconds_per_area']:g} s per MILP",
        f"rebuilt columns: {', '.join(d['columns'])}; tables per area: {', '.join(d['tables'])}",
    ]
    if d["skipped_tables"]:
        lines.append(f"tables not used (not published per area): {', '.join(d['skipped_tables'])}")
    if d["rows_left_out"]:
        lines.append(f"rows left out (a value outside the plan's domain): {d['rows_left_out']:,}")
    lines.append(
        f"guess from the overall mix and each area's size alone: "
        f"{_fmt_share(d['baseline_share'])} of records"
    )
    for key in ("exact", "dp"):
        r = d[key]
        if r is None:
            continue
        eps = f" at ε = {r['epsilon']:.4g}" if r["epsilon"] is not None else ""
        lines.append(
            f"{r['tables']}{eps}: {r['reproduced']:,} of {r['people']:,} records reproduced "
            f"exactly, share {_fmt_share(r['share_reproduced'])} (rebuilt {r['rebuilt']:,}); "
            f"areas optimal {r['areas_optimal']}, time-limited {r['areas_time_limited']}, "
            f"no solution in time {r['areas_without_solution']}; {r['seconds']:.1f} s"
        )
        if key == "exact":
            lines.append(
                f"  solutions: unique in {r['areas_unique_solution']} areas "
                f"({r['people_disclosed_for_certain']:,} people disclosed for certain), several "
                f"in {r['areas_several_solutions']}, unknown in {r['areas_uniqueness_unknown']}"
            )
    return lines
