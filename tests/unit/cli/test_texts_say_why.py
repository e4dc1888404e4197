"""Issue 37, point 6: texts that contradicted the user's choice or spoke in keys."""

from __future__ import annotations

from pathlib import Path

from helpers.cli import ROOT, run

PLAN = ROOT / "data" / "census_sample.plan.yaml"


def _plan(tmp_path: Path, budget: str) -> Path:
    text = PLAN.read_text("utf-8").replace("  epsilon: 1.0\n", f"  epsilon: 1.0\n{budget}", 1)
    path = tmp_path / "p.yaml"
    path.write_text(text, "utf-8")
    return path


def test_advanced_accounting_says_why_it_reads_basic(tmp_path: Path):
    """16 tables at ε = 1: the basic sum is tighter than the advanced bound, so the total is
    composed by basic composition; the text says why (it read as if the choice was lost)."""
    result = run("plan", str(_plan(tmp_path, "  accounting: advanced\n")))
    assert result.returncode == 0, result.stderr
    assert "basic composition (tighter than advanced composition" in result.stdout


def test_pure_accounting_says_delta_is_unused_in_words_not_keys(tmp_path: Path):
    result = run("plan", str(_plan(tmp_path, "  accounting: pure\n")))
    assert result.returncode == 0, result.stderr
    assert "δ is not used under pure accounting" in result.stdout + result.stderr
    assert "budget.delta is ignored" not in result.stdout + result.stderr


def test_auto_reads_as_a_sentence():
    result = run("plan", str(PLAN))
    assert "accounting: auto chose pure, the least expected error" in result.stdout + result.stderr
