"""Import discipline: the library never pulls in Streamlit; the release path stays light."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def modules_after(code: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return set(result.stdout.split())


def test_library_does_not_import_streamlit():
    loaded = modules_after(
        "import dprelease, dprelease.cli, dprelease.release.draw, dprelease.release.export, "
        "dprelease.accounting.allocation, dprelease.data.count"
    )
    assert "streamlit" not in loaded


def test_release_path_imports_neither_pandas_nor_scipy():
    # An explicit accountant with the tables as listed needs no optimiser: no scipy. (The
    # defaults, accounting and strategy auto, import scipy's optimiser to choose.)
    loaded = modules_after(
        "from dprelease.cli import main\n"
        "import dprelease.plan.parse, dprelease.stats.allocation, dprelease.data.count\n"
        "import dprelease.release.draw\n"
        "import dprelease.release.export\n"
        "import dataclasses\n"
        "from dprelease.plan.parse import load_plan\n"
        "from dprelease.stats.allocation import allocate\n"
        "from dprelease.data.count import load_data, count\n"
        "p = load_plan('data/census_sample.plan.yaml')\n"
        "b = dataclasses.replace(p.budget, accounting='zcdp', strategy='workload')\n"
        "p = dataclasses.replace(p, budget=b)\n"
        "allocate(p); count(load_data(p.data_path, p), p)\n"
    )
    assert "pandas" not in loaded
    assert "scipy" not in loaded
