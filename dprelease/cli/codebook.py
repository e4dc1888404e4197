"""`dprelease codebook DATA [--json] [--plan PLAN --out NEW_PLAN]`: the codebook a data file
declares (Stata and SPSS value labels, every format's variable labels), read from its header
without decoding a record.

Without `--plan` it prints the labelled columns as a plan's `columns:` section (YAML, or JSON
with `--json`), each marked `domain_source: value_labels`: the producer's declared codes,
public like a printed codebook, never values found in the records. With `--plan` it writes a
new plan (`--out`) whose categorical columns the file labels take their domain and labels from
the file; the plan's other columns, tables and budget are unchanged.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dprelease.errors import DataError, quote

if TYPE_CHECKING:
    from dprelease.data.formats.declared import DeclaredMetadata
    from dprelease.plan.model import Plan


def add_parser(commands: Any) -> None:
    from dprelease.data.formats import FORMAT_NAMES

    codebook = commands.add_parser(
        "codebook", help="print (or fill a plan with) the value labels a data file declares"
    )
    codebook.add_argument("data", nargs="?", help=f"data file ({FORMAT_NAMES})")
    codebook.add_argument(
        "--dictionary",
        metavar="FILE",
        help="a data dictionary (JSON {COLUMN: {values: {CODE: LABEL}}}, or a CSV "
        "column,value,label[,parent]): with --plan, shows what it sets; with --out, writes it",
    )
    codebook.add_argument("--json", action="store_true", help="print one JSON object")
    codebook.add_argument("--plan", help="fill this plan's labelled categorical columns")
    codebook.add_argument("--out", help="where to write the filled plan (a new .yaml or .json)")


def run(args: argparse.Namespace) -> int:
    from dprelease.data.formats.declared import declared_metadata

    if args.dictionary is not None:
        return _run_dictionary(args)
    if args.data is None:
        raise DataError("Give a data file (or --dictionary FILE --plan PLAN).")
    if (args.plan is None) != (args.out is None):
        raise DataError("Give --plan and --out together (the plan to fill, the new plan).")
    declared = declared_metadata(Path(args.data))
    if declared is None:
        raise DataError(
            f"The data file '{Path(args.data).name}' is in a format that declares no value "
            "labels; give a Stata, SPSS or SAS file, or write the domain and labels in the plan."
        )
    if args.plan is None:
        _print(declared, args.json)
        return 0
    filled = _fill_plan(declared, args.plan, Path(args.out))
    names = ", ".join(filled) if filled else "none (no categorical column of the plan is labelled)"
    print(f"wrote {args.out}; columns filled from the file's value labels: {names}")
    return 0


def declared_notes(plan: Plan, location: Path | str) -> list[str]:
    """`validate`'s notes on the labels a data file declares: a categorical column the plan
    declares without labels while the file labels it, and a `value_labels` domain that is no
    longer the file's codes."""
    from dprelease.data.formats.declared import declared_metadata
    from dprelease.plan.schema import CategoricalColumn

    if not isinstance(location, Path) or not location.is_file():
        return []  # a folder of parts or a URI: formats without labels
    declared = declared_metadata(location)
    notes = []
    for column in plan.schema.columns:
        book = None if declared is None else declared.codebook(column.name)
        if book is None or not isinstance(column, CategoricalColumn):
            continue
        if column.domain_source == "value_labels":
            if [str(c) for c in book.domain] != [str(v) for v in column.domain]:
                notes.append(
                    f"column {quote(column.name)} says its domain is the file's value labels, "
                    "but the file declares other codes now; `dprelease codebook` fills them again."
                )
        elif not column.value_labels:
            notes.append(
                f"the data file declares value labels for column {quote(column.name)} "
                f"({len(book.domain)} codes); `dprelease codebook DATA --plan PLAN --out NEW` "
                "takes them as its domain and labels."
            )
    return notes


def _columns(declared: DeclaredMetadata) -> dict[str, dict[str, Any]]:
    from dprelease.plan.edit import empty_plan, set_categorical

    plan = empty_plan()
    for name, book in declared.codebooks.items():
        plan = set_categorical(
            plan, name, list(book.domain), labels=dict(book.labels), from_value_labels=True
        )
    columns: dict[str, dict[str, Any]] = plan["columns"]
    return columns


def _print(declared: DeclaredMetadata, as_json: bool) -> None:
    if as_json:
        print(json.dumps(declared.to_dict(), indent=2, ensure_ascii=False))
        return
    from dprelease.plan.yaml_text import plan_yaml

    for name, label in declared.variable_labels.items():
        print(f"# {name}: {' '.join(label.split())}")
    columns = _columns(declared)
    if columns:
        print(plan_yaml({"columns": columns}), end="")
    else:
        print("# the file declares no value labels")


def _fill_plan(declared: DeclaredMetadata, plan_path: str, out: Path) -> list[str]:
    """Write the plan with its labelled categorical columns filled; the names filled."""
    from dprelease.plan.parse import dumps_plan, load_plan, loads_plan, plan_to_dict

    if out.exists():
        raise DataError(f"{out} exists; give a new file for the filled plan.")
    mapping = plan_to_dict(load_plan(plan_path))
    filled = []
    for name, column in _columns(declared).items():
        current = mapping["columns"].get(name)
        if current is None or current.get("kind", "categorical") != "categorical":
            continue
        kept = {k: v for k, v in current.items() if k in ("other", "parent", "parent_map")}
        mapping["columns"][name] = {**column, **kept}
        filled.append(name)
    base = Path(plan_path).resolve().parent
    plan = loads_plan(json.dumps(mapping), "json", base)  # the filled plan is checked whole
    out.write_text(dumps_plan(plan, "json" if out.suffix.lower() == ".json" else "yaml"), "utf-8")
    return filled


def _run_dictionary(args: argparse.Namespace) -> int:
    """`codebook --dictionary FILE --plan PLAN [--out NEW]` (issue 37): what a whole data
    dictionary sets in the plan's columns, then, with --out, the plan with it applied."""
    from dprelease.plan.dictionary import read_dictionary
    from dprelease.plan.parse import dumps_plan, load_plan, loads_plan, plan_to_dict

    if args.plan is None:
        raise DataError("Give --plan PLAN: the dictionary fills the columns that plan declares.")
    path = Path(args.dictionary)
    if not path.is_file():
        raise DataError(f"Dictionary {quote(args.dictionary)} does not exist.")
    dictionary = read_dictionary(path.read_bytes(), path.name)
    mapping = plan_to_dict(load_plan(args.plan))
    present = set(mapping["columns"])
    for row in dictionary.preview(present):
        note = f"  ({row['note']})" if row["note"] else ""
        described = f"  — {row['description']}" if row["description"] else ""
        print(f"{row['column']}: {row['sets']}{note}{described}")
    if args.out is None:
        print("(nothing written: give --out NEW_PLAN to apply it)")
        return 0
    out = Path(args.out)
    if out.exists():
        raise DataError(f"{out} exists; give a new file for the filled plan.")
    filled = dictionary.apply(mapping, present)
    base = Path(args.plan).resolve().parent
    plan = loads_plan(json.dumps(filled), "json", base)  # the filled plan is checked whole
    out.write_text(dumps_plan(plan, "json" if out.suffix.lower() == ".json" else "yaml"), "utf-8")
    print(f"wrote {out}")
    return 0
