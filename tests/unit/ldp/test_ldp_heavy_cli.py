"""`python -m dprelease ldp heavy-hitters|itemsets`: JSON and text output (estimates and
margins, never a true count), no ledger charge, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from helpers.cli import run

COUNTS = {"English": 3001, "Spanish": 1999, "French": 1203}


@pytest.fixture(scope="module")
def survey(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ldp") / "survey.csv"
    lines = ["id,language,spoken"]
    for value, count in COUNTS.items():
        spoken = {"English": "English; Spanish", "Spanish": "Spanish", "French": "French; English"}
        lines += [f"{len(lines)},{value},{spoken[value]}" for _ in range(count)]
    lines += [f"{len(lines)},w{i},w{i % 7}" for i in range(800)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_heavy_hitters_json_has_the_contracts_keys_and_no_true_count(survey):
    out = run(
        "ldp", "heavy-hitters", str(survey), "--column", "language", "--epsilon", "8",
        "--top", "3", "--max-length", "8", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [h["value"] for h in data["top"]] == ["English", "Spanish", "French"]
    assert all(set(h) == {"value", "estimate", "moe"} for h in data["top"])
    for hit in data["top"]:
        # a 95% margin each: twice it (about 3.9σ) keeps the test from failing by chance
        assert abs(hit["estimate"] - COUNTS[hit["value"]]) < 2 * hit["moe"]
    assert "n" not in data and "true" not in out.stdout
    assert data["epsilon"] == 8.0


def test_heavy_hitters_text_names_the_simulation_and_each_value(survey):
    out = run(
        "ldp", "heavy-hitters", str(survey), "--column", "language", "--epsilon", "8",
        "--max-length", "8",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "simulation" in out.stdout and "estimates and margins only" in out.stdout
    assert "English" in out.stdout and "above the noise threshold" in out.stdout
    rows = sum(COUNTS.values()) + 800
    assert str(rows) not in out.stdout and f"{rows:,}" not in out.stdout  # not the row count


def test_itemsets_json_finds_items_and_pairs(survey):
    out = run(
        "ldp", "itemsets", str(survey), "--column", "spoken", "--epsilon", "8",
        "--top", "3", "--max-length", "8", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {h["value"] for h in data["items"]} >= {"English", "Spanish"}
    assert ["English", "Spanish"] in [p["items"] for p in data["pairs"]]
    assert data["separator"] == ";"


def test_neither_command_charges_the_ledger(survey):
    ledger = Path(os.environ["DPRELEASE_LEDGER"])
    before = ledger.read_bytes() if ledger.exists() else None
    for command, column in (("heavy-hitters", "language"), ("itemsets", "spoken")):
        out = run("ldp", command, str(survey), "--column", column, "--epsilon", "4")
        assert out.returncode == 0, out.stderr
    assert (ledger.read_bytes() if ledger.exists() else None) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["heavy-hitters", "--column", "nope", "--epsilon", "1"], "no column 'nope'"),
        (["heavy-hitters", "--column", "language", "--epsilon", "0"], "greater than 0"),
        (["heavy-hitters", "--column", "language", "--epsilon", "101"], "meaningless"),
        (["heavy-hitters", "--column", "language", "--epsilon", "1", "--top", "0"], "--top"),
        (["itemsets", "--column", "nope", "--epsilon", "1"], "no column 'nope'"),
        (["itemsets", "--column", "spoken", "--epsilon", "-1"], "greater than 0"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(survey, args, message):
    out = run("ldp", args[0], str(survey), *args[1:])
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and message in out.stderr
    assert out.stderr.count("\n") == 1 and out.stdout == ""


def test_empty_and_ambiguous_answers_are_one_line_errors(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("id,spoken\n1,English\n2,\n3,Spanish\n")
    ambiguous = tmp_path / "pipe.csv"
    ambiguous.write_text("id,spoken\n1,English|Spanish\n")
    for path, message in ((empty, "empty answer"), (ambiguous, "separated by ';' only")):
        out = run("ldp", "itemsets", str(path), "--column", "spoken", "--epsilon", "1")
        assert out.returncode == 2 and message in out.stderr
        assert out.stderr.count("\n") == 1


def test_a_missing_data_file_is_one_line():
    out = run("ldp", "heavy-hitters", "nowhere.csv", "--column", "c", "--epsilon", "1")
    assert out.returncode == 2 and "does not exist" in out.stderr


def test_a_found_value_with_a_control_character_prints_on_one_line(tmp_path):
    path = tmp_path / "bell.csv"
    path.write_text("word\n" + "ring\x07bell\n" * 3000 + "".join(f"w{i}\n" for i in range(300)))
    out = run("ldp", "heavy-hitters", str(path), "--column", "word", "--epsilon", "8")
    assert out.returncode == 0, out.stderr
    assert "ring\\x07bell" in out.stdout and "\x07" not in out.stdout


def test_no_figure_gives_the_row_count_back_and_the_output_says_confidential(tmp_path):
    # Issue 34: the JSON's `moe_near_zero` inverted to the exact row count, and the output
    # read as a release although nothing was charged.
    from dprelease.ldp.base import margin_rows
    from dprelease.ldp.heavy_hitters import heavy_hitters, text_codes

    def margins(rows: int) -> list[float]:
        texts = ["a", "b"]
        codes = (np.arange(rows) % 2).astype(np.int64)
        values, coded = text_codes(texts, codes, "x")
        found = heavy_hitters(values, coded, 8.0, 2, 4, rng=np.random.default_rng(1))
        return [found.moe_near_zero]

    assert margin_rows(5_000) == margin_rows(5_001) == 8_192 and margin_rows(8_192) == 8_192
    assert margins(5_000) == margins(5_001)  # a margin says only the power-of-two bracket
    path = tmp_path / "s.csv"
    path.write_text("v\n" + "a\n" * 600 + "b\n" * 400)
    for command, column in (("heavy-hitters", "v"), ("itemsets", "v")):
        shown = run("ldp", command, str(path), "--column", column, "--epsilon", "8", "--json")
        assert shown.returncode == 0, shown.stderr
        data = json.loads(shown.stdout)
        assert "moe_near_zero" not in data and "not charged" in data["confidential"]
        text = run("ldp", command, str(path), "--column", column, "--epsilon", "8")
        assert text.stdout.startswith("CONFIDENTIAL") and "near 0" not in text.stdout
