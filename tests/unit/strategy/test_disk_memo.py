"""The strategy's shape searches kept on disk (issue 34): keyed by public inputs only, the
same answer as a fresh search, and a file that is not an answer is searched again."""

from __future__ import annotations

import json

from dprelease.strategy import disk_memo, select
from dprelease.strategy.select import WorkloadTable, pure_unions
from helpers.strategy import SELECT_SCHEMA as SCHEMA

TABLES = [
    WorkloadTable("age", ("age",)),
    WorkloadTable("sex", ("sex",)),
    WorkloadTable("county_sex", ("county", "sex")),
    WorkloadTable("age_sex", ("age", "sex")),
]


def _fresh(monkeypatch, folder) -> None:
    monkeypatch.setenv("DPRELEASE_CACHE", str(folder))
    select._laplace_free_shape.cache_clear()
    select._gaussian_shape.cache_clear()


def _laplace_shape():
    domain, workload, weights = select._workload(SCHEMA, TABLES)
    return select._laplace_free_shape(domain, workload, weights, "auto")


def test_a_kept_answer_is_the_searched_one_and_is_not_searched_again(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    searched = _laplace_shape()
    kept = list((tmp_path / "strategy").glob("*.json"))
    assert len(kept) == 2  # the Laplace shape, and the Gaussian one it starts from
    _fresh(monkeypatch, tmp_path)
    calls: list[object] = []
    monkeypatch.setattr(select, "epsilon_shape", lambda *a, **k: calls.append(a))
    assert _laplace_shape() == searched  # every bit: floats round-trip through JSON
    assert calls == []
    assert pure_unions(SCHEMA, TABLES) is not None


def test_the_key_holds_no_data_and_the_file_no_more_than_the_shape(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    candidates, shares = _laplace_shape()
    texts = [json.loads(p.read_text()) for p in (tmp_path / "strategy").glob("*.json")]
    assert [[list(c) for c in candidates], list(shares)] in texts


def test_a_file_that_is_not_an_answer_is_searched_again(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    searched = _laplace_shape()
    for bad in ("[[[0]], [1.0]]", "[[], []]", '{"a": 1}', "not json", "[[[0, 0, 0]], [-1.0]]"):
        for path in (tmp_path / "strategy").glob("*.json"):
            path.write_text(bad)
        _fresh(monkeypatch, tmp_path)
        assert _laplace_shape() == searched


def test_off_keeps_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("DPRELEASE_CACHE", "off")
    assert disk_memo.cache_folder() is None
    monkeypatch.delenv("DPRELEASE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert disk_memo.cache_folder() == tmp_path / "dprelease" / "strategy"
