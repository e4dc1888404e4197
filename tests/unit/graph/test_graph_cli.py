"""`python -m dprelease graph`: the k-degree risk (JSON keys of contract section 5, no node
named), the degree histogram release (files, ledger), and one-line errors with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dprelease.cli import main
from helpers.cli import run_child

EDGES = (
    "from,to\nAlice,Bob\nAlice,Cathy\nAlice,Ed\nCathy,Bob\nCathy,Dave\nCathy,Fred\n"
    "Cathy,Gina\nBob,Ed\nDave,Fred\nGina,Fred\nBob,Alice\n"
)
NAMES = ("Alice", "Bob", "Cathy", "Dave", "Ed", "Fred", "Gina")


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exit_:  # a usage mistake: argparse exits
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def edges(tmp_path: Path) -> Path:
    path = tmp_path / "mail.csv"
    path.write_text(EDGES)
    return path


def test_k_degree_json_has_the_contract_keys_and_names_no_node(capsys, edges):
    code, out, err = run(capsys, "graph", str(edges), "--k-degree", "2", "--json")
    assert code == 0
    result = json.loads(out)  # stdout is one JSON object and nothing else
    assert (result["k"], result["nodes"], result["edges"]) == (1, 7, 10)
    assert result["unique_by_degree"] == 1 and result["merged_repeated_edges"] == 1
    assert result["anonymisation"]["k_after"] >= 2
    assert err.startswith("CONFIDENTIAL")
    assert not any(name in out + err for name in NAMES)


def test_k_degree_text(capsys, edges):
    code, out, _ = run(capsys, "graph", str(edges), "--k-degree", "2")
    assert code == 0
    assert "k-degree anonymity: k = 1" in out
    assert "nodes unique by degree: 1" in out
    assert "edges to add" in out
    assert not any(name in out for name in NAMES)


def test_degree_histogram_release_is_charged_and_written(capsys, edges, tmp_path, ledger_file):
    out_dir = tmp_path / "release"
    args = ["graph", str(edges), "--degree-histogram", "--epsilon", "0.5", "--out", str(out_dir)]
    code, out, err = run(capsys, *args, "--node-dp", "--max-degree", "3", "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["privacy_unit"] == "node" and summary["sensitivity_l1"] == 7
    assert sorted(p.name for p in out_dir.iterdir()) == ["degree_histogram.csv", "metadata.json"]
    meta = json.loads((out_dir / "metadata.json").read_text())
    assert meta["ledger"]["release_id"] == summary["ledger"]["release_id"]
    assert "undirected simple graph" in err
    code, out, _ = run(capsys, "ledger", "show", "--json")
    (account,) = json.loads(out)["datasets"]
    assert code == 0 and account["spent"]["epsilon"] == 0.5
    assert account["releases"][0]["tables"] == ["degree_histogram"]


def test_no_ledger_says_so(capsys, edges, tmp_path):
    out_dir = tmp_path / "r"
    code, _, err = run(
        capsys, "graph", str(edges), "--degree-histogram", "--epsilon", "1", "--out",
        str(out_dir), "--no-ledger",
    )  # fmt: skip
    assert code == 0 and "--no-ledger" in err
    assert json.loads((out_dir / "metadata.json").read_text())["ledger"] is None
    assert "10 or more" not in (out_dir / "degree_histogram.csv").read_text()
    assert "100,100 or more" in (out_dir / "degree_histogram.csv").read_text()


@pytest.mark.parametrize(
    ("content", "args", "pattern"),
    [
        ("a,b\nx,y\ny,y\n", ["--k-degree", "2"], "Row 2 of 'e.csv' is a self-loop"),
        ("only\nx\n", ["--k-degree", "2"], "has one column"),
        ("", ["--k-degree", "2"], "is empty"),
        ("a,b\nx,y\n", ["--k-degree", "5"], "more than the graph's nodes"),
        ("a,b\nx,y\n", ["--k-degree", "2", "--epsilon", "1"], "--epsilon belong to"),
        ("a,b\nx,y\n", ["--k-degree", "2", "--cap", "1"], "--cap belong to"),
        ("a,b\nx,y\n", ["--degree-histogram", "--epsilon", "1"], "needs --epsilon E and --out"),
        ("a,b\nx,y\n", ["--degree-histogram", "--epsilon", "1", "--node-dp", "--out", "o"],
         "--node-dp needs --max-degree"),
        ("a,b\nx,y\n", ["--degree-histogram", "--epsilon", "0", "--out", "o"],
         "must be above 0"),
        ("a,b\nx,y\n", ["--degree-histogram", "--epsilon", "1", "--out", "o", "--max-rows", "0"],
         "must be at least 1"),
    ],
)  # fmt: skip
def test_errors_are_one_line_and_exit_2(capsys, tmp_path, content, args, pattern):
    path = tmp_path / "e.csv"
    path.write_text(content)
    code, out, err = run(capsys, "graph", str(path), *args)
    assert code == 2
    assert pattern in err and err.startswith("error: ")
    assert err.count("\n") == 1 and out == ""
    assert not (tmp_path / "o").exists()


def test_the_command_is_registered_for_python_m(edges):
    result = run_child("graph", str(edges), "--k-degree", "3", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["nodes"] == 7


def test_one_graph_however_written_is_one_account(capsys, tmp_path, ledger_file):
    # Issue 34: the account was keyed by the edge list's rows, so the same graph written
    # `v,u`, with an edge repeated or a weight column got fresh budget (ε = 3 on one graph
    # under a cap of 1).
    header, *rows = EDGES.splitlines()
    spellings = {
        "mail.csv": EDGES,
        "reversed.csv": "\n".join(["to,from", *(",".join(r.split(",")[::-1]) for r in rows)]),
        "repeated.csv": "\n".join([header, *rows, rows[0], rows[3]]),
        "weighted.csv": "\n".join([header + ",weight", *(f"{r},1.5" for r in reversed(rows))]),
        "padded.csv": "\n".join(["a,b", *(r.replace(",", " , ") for r in rows)]),
    }
    for name, text in spellings.items():
        (tmp_path / name).write_text(text + "\n")
    release = ["--degree-histogram", "--epsilon", "1"]
    first = run(capsys, "graph", str(tmp_path / "mail.csv"), *release, "--out",
                str(tmp_path / "r0"), "--cap", "1")  # fmt: skip
    assert first[0] == 0, first[2]
    for index, name in enumerate(spellings, start=1):
        code, _, err = run(capsys, "graph", str(tmp_path / name), *release, "--out",
                           str(tmp_path / f"r{index}"))  # fmt: skip
        assert code == 2 and "is left of the lifetime cap 1" in err, (name, err)
    code, out, _ = run(capsys, "ledger", "show", "--json")
    (account,) = json.loads(out)["datasets"]
    assert account["spent"]["epsilon"] == 1.0
