"""dprelease as `pip install -r requirements.txt` leaves it, without a download.

The README's first command installs requirements.txt into a fresh virtualenv; code exported
with `dprelease export` then runs from any folder because dprelease itself is installed, not
because the repository is the working folder or on PYTHONPATH. A real install in a test needs
the network (pip fetches setuptools to build) and several seconds, so `installed_python` builds
what the install leaves: a virtualenv (no pip in it, a tenth of a second) whose site-packages
sees the running interpreter's packages (the third-party requirements, installed already) and,
for each requirements.txt line that installs this repository (`.`, `-e .[extra]`), a `.pth`
file naming the checkout, as setuptools' editable install writes. A requirements.txt without
such a line gives a virtualenv where `import dprelease` fails, as a user's did (issue 37).
"""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
from pathlib import Path

from helpers import ROOT

_THIS_PROJECT = re.compile(r"^(-e\s+|--editable\s+)?\.(\[[\w,\s-]+\])?$")


def requirement_lines(path: Path = ROOT / "requirements.txt") -> list[str]:
    """The requirement lines of a requirements file: comments and blank lines dropped."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text("utf-8").splitlines())
    return [line for line in lines if line]


def installs_this_project(line: str) -> bool:
    """Whether a requirements line installs the repository it sits in (`.`, `-e .[dashboard]`)."""
    return _THIS_PROJECT.match(line) is not None


def installed_python(folder: Path) -> Path:
    """A Python in `folder` where requirements.txt is installed (see the module's docstring)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=60
    )
    python = folder / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    # The third-party requirements: the running interpreter's site-packages (every one on its
    # path, e.g. also one a .pth file added), never the checkout itself.
    packages = [sysconfig.get_paths()["purelib"]]
    packages += [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    (Path(site) / "requirements.pth").write_text("\n".join(dict.fromkeys(packages)) + "\n")
    if any(installs_this_project(line) for line in requirement_lines()):
        (Path(site) / "__editable__.dprelease.pth").write_text(f"{ROOT}\n")
    return python


def bare_env(**extra: str) -> dict[str, str]:
    """An environment with no PYTHONPATH: only what is installed can be imported."""
    return {"PATH": "/usr/bin:/bin", **extra}
