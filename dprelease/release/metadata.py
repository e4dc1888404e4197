"""A release's machine-readable metadata (`metadata.json`): what `plan --json` prints, plus
post-processing, files, time, versions and the ledger entry; and each table's released error.
Its own module so that the export (which writes it) and the report (which reads it) do not
import each other."""

from __future__ import annotations

import platform
from importlib import metadata as package_metadata
from typing import Any

from dprelease import __version__
from dprelease.accounting.allocated import equivalent_noise
from dprelease.plan.schema import CategoricalColumn
from dprelease.postprocess.pipeline import STEP_ORDER
from dprelease.release.constraints_files import constraints_metadata
from dprelease.release.draw import NoisyTable, Release
from dprelease.release.microdata_file import microdata_metadata
from dprelease.release.statistics_files import statistics_metadata


def released_error(release: Release, table: NoisyTable) -> dict[str, Any]:
    """Standard error and margin of error of a table's *released* counts (per cell).

    Exact where no step moves counts off the (least-squares) estimate, else from the
    simulation; the margin uses the noise family of the measurements at that variance.
    Without a simulation, the raw estimate's figures (exact)."""
    accuracy = release.accuracy.get(table.name)
    budget = table.budget
    rmse = budget.expected_rmse if accuracy is None else accuracy.rmse_postprocessed
    exact = accuracy is None or accuracy.exact
    alpha = 1 - release.allocation.confidence
    moe = equivalent_noise(budget.noise.mechanism, rmse**2).moe(alpha) if rmse > 0 else 0.0
    return {
        "standard_error": rmse,
        "moe": moe,
        "bias": 0.0 if accuracy is None else accuracy.bias_postprocessed,
        "method": "exact" if exact else "simulated",
    }


def _software() -> dict[str, str]:
    versions = {"dprelease": __version__, "python": platform.python_version()}
    for name in ("opendp", "numpy", "pyarrow"):
        try:
            versions[name] = package_metadata.version(name)
        except package_metadata.PackageNotFoundError:
            versions[name] = "unknown"
    return versions


def release_metadata(release: Release, ledger: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything `plan --json` prints, plus post-processing, files, time and versions, and
    `ledger`: where the release was charged (`release_id`, `dataset` name), or null for a
    release charged to no ledger (contract section 5)."""
    plan = release.plan
    meta = release.allocation.to_dict()
    counts = {t.name: t for t in release.tables}
    for entry in meta["tables"]:  # count tables, then statistics (issue 16)
        entry["file"] = f"tables/{entry['name']}.csv"
        table = counts.get(entry["name"])
        if table is None:
            continue
        measured_as = table.budget.measured_as
        entry["measurement_file"] = (
            None if measured_as is None else f"measurements/{measured_as}.csv"
        )
        entry["released"] = released_error(release, table)
        accuracy = release.accuracy.get(entry["name"])
        if accuracy is not None:
            entry["accuracy"] = accuracy.to_dict()
    for entry in meta["measurements"]:
        entry["file"] = f"measurements/{entry['name']}.csv"
    meta["postprocess"] = {
        **plan.postprocess.to_dict(),
        "step_order": list(STEP_ORDER),
        "steps_applied": list(release.steps_applied),
        "steps_skipped": list(release.steps_skipped),
        # issue 38: which estimate the tables are (shrunk, nonnegative or unbiased)
        "estimate": plan.postprocess.effective.estimate,
    }
    meta["unit"] = {"kind": plan.unit.kind, "max_rows": plan.unit.max_rows}
    if plan.unit.column is not None:
        meta["unit"]["column"] = plan.unit.column
    meta["neighbors"] = plan.neighbors
    meta["columns"] = {
        column.name: {
            "kind": column.kind,
            "labels": list(column.labels),
            "domain_source": column.domain_source,
            **(
                {"parent": column.parent}
                if isinstance(column, CategoricalColumn) and column.parent
                else {}
            ),
            **({"value_labels": dict(column.value_labels)} if column.value_labels else {}),
        }
        for column in plan.schema.columns
        if column.name in plan.grouping_columns
    }
    if release.microdata is not None:  # issue 27: the tables are the records' tabulations
        meta["synthetic"] = microdata_metadata(release.microdata)
        for entry in meta["tables"]:
            if entry["name"] in counts:
                entry["estimate"] = "model"
    statistics_metadata(meta, plan, release.discovered)  # issue 16
    constraints_metadata(meta, release)  # issue 27: invariants, structural zeros
    if release.empty_tables:
        meta["empty_tables"] = [
            {"name": name, "file": f"tables/{name}.csv", "note": "no value was discovered"}
            for name, _, _ in release.empty_tables
        ]
    meta["noise"] = "OpenDP secure samplers: cryptographically secure, exact, not reproducible"
    meta["created"] = release.created
    meta["software"] = _software()
    meta["format"] = "dprelease release v1"
    meta["ledger"] = None if ledger is None else dict(ledger)
    return meta
