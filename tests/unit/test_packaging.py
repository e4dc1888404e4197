"""Issue 37: what `pip install` gives is what the code needs. requirements.txt (the README's
first command) installs dprelease itself, so that code exported by `dprelease export` runs from
any folder; pyproject.toml's dependencies and extras name the same packages with the same
versions, so that `pip install dprelease[dashboard]` gives the same library as requirements.txt
(before, duckdb and dp-accounting were missing and there was no dashboard extra)."""

from __future__ import annotations

import re
import tomllib

from helpers import ROOT
from helpers.install import installs_this_project, requirement_lines

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]


def _by_name(requirements: list[str]) -> dict[str, str]:
    """Requirement → {normalised name: the whole specifier}."""
    named = {}
    for line in requirements:
        name = re.match(r"[A-Za-z0-9_.-]+", line)
        assert name is not None, line
        named[re.sub(r"[-_.]+", "-", name.group().lower())] = line.replace(" ", "")
    return named


def test_requirements_txt_installs_dprelease_with_its_dashboard():
    lines = requirement_lines()
    project = [line for line in lines if installs_this_project(line)]
    assert project, "requirements.txt must install the repository itself (a line `-e .`)"
    assert "[dashboard]" in project[0]


def test_pyproject_names_every_runtime_requirement_with_the_same_version():
    third_party = [line for line in requirement_lines() if not installs_this_project(line)]
    declared = _by_name([*PROJECT["dependencies"], *PROJECT["optional-dependencies"]["dashboard"]])
    assert declared == _by_name(third_party)


def test_the_dashboard_and_spark_are_extras_of_the_library():
    extras = PROJECT["optional-dependencies"]
    core = set(_by_name(PROJECT["dependencies"]))
    assert {"streamlit", "plotly"} == set(_by_name(extras["dashboard"]))
    assert not {"streamlit", "plotly", "pyspark"} & core  # the library imports neither
    spark = [
        line for line in requirement_lines(ROOT / "requirements-spark.txt") if "-r" not in line
    ]
    assert _by_name(extras["spark"]) == _by_name(spark)
