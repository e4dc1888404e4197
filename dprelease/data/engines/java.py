"""Java for the spark engine: found and checked (17 or later) before Spark starts, so that a
missing or old Java is one line that says what to install, not a PySpark traceback.

Spark's launcher takes `$JAVA_HOME/bin/java` when JAVA_HOME is set, else `java` on the PATH;
this looks in the same places, in the same order.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from dprelease.errors import DataError

MIN_JAVA = 17
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')
_HOW = "install OpenJDK 17 or later (e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"


def _needs(why: str) -> DataError:
    return DataError(f"the spark engine needs Java {MIN_JAVA} or later ({why}); {_HOW}.")


def java_major(version_text: str) -> int | None:
    """The major version in `java -version`'s output: "1.8.0" is 8, "17.0.15" is 17."""
    match = _VERSION.search(version_text)
    if match is None:
        return None
    first, second = int(match.group(1)), match.group(2)
    return int(second) if first == 1 and second is not None else first


def find_java() -> Path:
    """The `java` Spark would start, or DataError saying why there is none."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        if not os.access(java, os.X_OK):
            raise _needs(f"JAVA_HOME is {home}, which has no bin/java")
        return java
    found = shutil.which("java")
    if found is None:
        raise _needs("no `java` on the PATH and JAVA_HOME is not set")
    return Path(found)


def check_java() -> Path:
    """The `java` Spark would start, checked to be Java 17 or later (else DataError)."""
    java = find_java()
    try:
        shown = subprocess.run(
            [str(java), "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise _needs(f"{java} did not run: {type(error).__name__}") from None
    major = java_major(shown.stderr + shown.stdout)
    if major is None:
        raise _needs(f"{java} -version did not say its version")
    if major < MIN_JAVA:
        raise _needs(f"found Java {major} at {java}")
    return java
