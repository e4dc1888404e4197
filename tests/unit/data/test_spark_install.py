"""Issue 24.11: the spark engine says what it needs, in one line and with exit 2, when Java or
PySpark is missing (it used to be "internal error … a bug in dprelease", exit 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import ROOT, SAMPLE_PLAN, child_env

SAMPLE_DATA = ROOT / "data" / "census_sample.csv"


def release_with_spark(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    args = ["release", str(SAMPLE_PLAN), "--data", str(SAMPLE_DATA), "--engine", "spark"]
    return subprocess.run(
        [sys.executable, "-m", "dprelease", *args, "--out", str(tmp_path / "r"), "--no-ledger"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=child_env(**env),
        timeout=300,
    )


def fake_java(folder: Path, version_line: str) -> Path:
    """A `java` that prints `version_line` to stderr, as `java -version` does."""
    folder.mkdir(parents=True)
    java = folder / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(0o755)
    return java


def assert_needs_java(result: subprocess.CompletedProcess[str], detail: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("warning: --no-ledger"), lines
    assert lines[1].startswith("error: the spark engine needs Java 17 or later ("), lines
    assert detail in lines[1]


def test_no_java_on_the_path_and_no_java_home(tmp_path):
    result = release_with_spark(tmp_path, PATH=str(tmp_path / "nothing"))
    assert_needs_java(result, "no `java` on the PATH and JAVA_HOME is not set")
    assert not (tmp_path / "r").exists()


def test_an_old_java_is_named(tmp_path):
    fake_java(tmp_path / "bin", 'java version "1.8.0_392"')
    result = release_with_spark(tmp_path, PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert_needs_java(result, f"found Java 8 at {tmp_path / 'bin' / 'java'}")


def test_java_home_is_used_first(tmp_path):
    fake_java(tmp_path / "jdk" / "bin", 'openjdk version "11.0.21" 2023-10-17')
    result = release_with_spark(tmp_path, JAVA_HOME=str(tmp_path / "jdk"))
    assert_needs_java(result, f"found Java 11 at {tmp_path / 'jdk' / 'bin' / 'java'}")


def test_a_java_home_without_java(tmp_path):
    (tmp_path / "jdk").mkdir()
    result = release_with_spark(tmp_path, JAVA_HOME=str(tmp_path / "jdk"))
    assert_needs_java(result, f"JAVA_HOME is {tmp_path / 'jdk'}, which has no bin/java")


@pytest.mark.parametrize(
    ("line", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('java version "1.8.0_392"', 8),
        ('openjdk version "21" 2023-09-19', 21),
        ('openjdk version "11.0.2-ea"', 11),
        ("something else", None),
    ],
)
def test_java_versions_are_read(line, major):
    from dprelease.data.engines.java import java_major

    assert java_major(line) == major


def test_without_pyspark_the_error_names_the_install_line(tmp_path):
    # A pyspark that cannot be imported, ahead of the real one on the path.
    shadow = tmp_path / "shadow" / "pyspark"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no pyspark here')\n")
    result = release_with_spark(tmp_path, PYTHONPATH=f"{ROOT}:{tmp_path / 'shadow'}")
    assert result.returncode == 2, result.stderr
    error = result.stderr.splitlines()[-1]
    assert error == (
        "error: the spark engine needs PySpark: pip install -r requirements-spark.txt "
        "(or pip install 'dprelease[spark]'), and Java 17 or later."
    )
