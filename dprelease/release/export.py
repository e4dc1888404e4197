"""Export a `Release` as files: metadata.json, tables/, measurements/, report.html.

`release_files` builds the bytes (no file-system policy); `write_release` puts them in a new
directory or zip, atomically, and refuses to overwrite. Only a `Release` drawn with the
secure sampler can be exported: a `Preview` is refused. Nothing written here holds a true
count, the true number of rows or a seed, except the exact counts of a table the plan marks
`invariant: true` (issue 27), published as such and labelled so in the metadata and report.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from dprelease.errors import InternalError, ReleaseError
from dprelease.plan.model import Plan
from dprelease.plan.table_spec import TableSpec
from dprelease.release.constraints_files import cell_moes
from dprelease.release.csv_cells import csv_bytes, csv_cell, csv_line, csv_safe
from dprelease.release.draw import Release
from dprelease.release.metadata import release_metadata, released_error
from dprelease.release.microdata_file import FILE, microdata_csv
from dprelease.release.report import report_html
from dprelease.release.report_domains import with_labels
from dprelease.release.statistics_files import statistic_csv


def _number(value: Any) -> str:
    if isinstance(value, np.integer | int):
        return str(int(value))
    return f"{float(value):.10g}"


def _cells(text: str | list[str], size: int) -> list[str]:
    """An extra column's cells as CSV text: one text for every cell, or a text per cell."""
    if isinstance(text, str):
        return [csv_cell(text)] * size
    quoted = {t: csv_cell(t) for t in set(text)}  # a table's margins of error are few
    return [quoted[t] for t in text]


def _table_csv(
    plan: Plan,
    spec: TableSpec,
    values: np.ndarray,
    *extras: tuple[str, str | list[str]],
) -> bytes:
    """by-columns… (each labelled code followed by its `C_label`), count, then the `extras`
    (`moe` of a table, per cell; `noise_std` of a measurement, one value; an invariant
    table's `invariant` flag).

    Each column's codes (and labels) are made CSV text once per value of its domain, not once
    per cell: a cell's line joins its columns' texts (county × sex: 3,145 texts, not 6,286
    rows of four cells)."""
    schema = plan.schema
    header, _ = with_labels([*spec.by, "count", *(name for name, _ in extras)], (), spec.by, schema)
    texts = []  # per by-column: the CSV text of each code (with its label)
    for name in spec.by:
        _, labelled = with_labels([name], ([code] for code in schema[name].labels), [name], schema)
        texts.append([",".join(csv_cell(csv_safe(cell)) for cell in row) for row in labelled])
    # a number's text (digits, `.`, `-`, `+`, `e`, inf, nan) never needs quotes
    listed = values.tolist()
    numbers = map(str, listed) if values.dtype.kind in "iu" else map(_number, listed)
    columns = [_cells(text, values.size) for _, text in extras]
    cells = itertools.product(*texts)
    lines = [csv_line([csv_safe(column) for column in header])]
    lines += [
        ",".join((*cell, *rest)) for cell, *rest in zip(cells, numbers, *columns, strict=True)
    ]
    return "".join(line + "\n" for line in lines).encode("utf-8")


def release_files(release: Release, ledger: dict[str, Any] | None = None) -> dict[str, bytes]:
    """The release as {relative path: bytes}; `ledger` as in `release_metadata`."""
    if not isinstance(release, Release):
        raise InternalError("only a Release drawn with the secure sampler can be exported")
    files = {
        "metadata.json": (
            json.dumps(release_metadata(release, ledger), indent=2, ensure_ascii=False) + "\n"
        ).encode("utf-8")
    }
    plan = release.plan
    for table in release.tables:
        moe = _number(released_error(release, table)["moe"])
        files[f"tables/{table.name}.csv"] = _table_csv(
            plan,
            table.budget.spec,
            table.released_counts,
            ("moe", cell_moes(plan, table.budget.spec, moe)),  # 0 on a structural zero
        )
    for invariant in release.invariants:  # exact counts: the plan's explicit choice
        files[f"tables/{invariant.name}.csv"] = _table_csv(
            plan, invariant.spec, invariant.released_counts, ("moe", "0"), ("invariant", "true")
        )
    for measured in release.measurements:
        std = _number(measured.budget.noise.std)
        files[f"measurements/{measured.name}.csv"] = _table_csv(
            plan, measured.budget.spec, measured.noisy_counts, ("noise_std", std)
        )
    for name, by, last in release.empty_tables:  # issue 16: a domain that found nothing
        files[f"tables/{name}.csv"] = csv_bytes([[*(csv_safe(c) for c in by), last]])
    for released in release.statistics:  # issue 16: by-columns, then value
        files[f"tables/{released.name}.csv"] = statistic_csv(
            release.plan, released, csv_safe, _number
        )
    if release.microdata is not None:
        files[FILE] = microdata_csv(plan, release.microdata)
    files["report.html"] = report_html(release).encode("utf-8")
    return files


def files_zip(files: dict[str, bytes]) -> bytes:
    """Release files as the bytes of a zip file."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def release_zip(release: Release) -> bytes:
    """The release as the bytes of a zip file (for a download button)."""
    return files_zip(release_files(release))


def check_output_path(out: str | Path) -> Path:
    """A new path in an existing folder (a release, or any file we write): never overwrite."""
    out = Path(out)
    if out.exists():
        raise ReleaseError(
            f"'{out}' already exists; choose a new path (nothing is ever overwritten)."
        )
    if not out.parent.is_dir():
        raise ReleaseError(f"The folder '{out.parent}' does not exist; create it first.")
    return out


STAGING_PREFIX = ".dprelease-staging-"


def _staging(folder: Path) -> Path:
    """A new staging folder, 0700 (mkdtemp), named after this process so that the next run
    can tell whether its writer is gone."""
    return Path(tempfile.mkdtemp(dir=folder, prefix=f"{STAGING_PREFIX}{os.getpid()}-"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def clean_stale_staging(folder: str | Path) -> list[Path]:
    """Remove staging folders that a killed release left in `folder` (their process is gone,
    and they are ours); returns what was removed."""
    removed = []
    for entry in Path(folder).glob(f"{STAGING_PREFIX}*"):
        pid_text = entry.name[len(STAGING_PREFIX) :].split("-", 1)[0]
        try:
            owned = entry.lstat().st_uid == os.getuid() and entry.is_dir()
        except OSError:
            continue
        if owned and pid_text.isdigit() and not _alive(int(pid_text)):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def write_files(files: dict[str, bytes], out: str | Path) -> Path:
    """Write release files to a new directory, or a zip when `out` ends in .zip; never
    overwrite. Everything is written inside a 0700 staging folder next to `out` and then
    renamed into place, so a failure (or a kill) leaves no partial release at `out`, and what
    a killed process leaves is unreadable to others and removed by the next run."""
    out = check_output_path(out)
    clean_stale_staging(out.parent)
    staging: Path | None = None
    try:
        staging = _staging(out.parent)
        if out.suffix.lower() == ".zip":
            staged = staging / "release.zip"
            staged.write_bytes(files_zip(files))
            os.link(staged, out)  # fails if `out` appeared meanwhile: never overwrite
            return out
        inner = staging / "release"
        for name, content in files.items():
            target = inner / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        os.mkdir(out)  # claims the name atomically; fails if it appeared meanwhile
        for entry in inner.iterdir():
            entry.rename(out / entry.name)
        return out
    except FileExistsError:
        raise ReleaseError(
            f"'{out}' already exists; choose a new path (nothing is ever overwritten)."
        ) from None
    except OSError as error:
        raise ReleaseError(
            f"Cannot write the release to '{out}': {error.strerror or error}; choose another path."
        ) from None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def write_release(release: Release, out: str | Path) -> Path:
    """Write to a new directory, or a zip when `out` ends in .zip; never overwrite."""
    return write_files(release_files(release), out)
