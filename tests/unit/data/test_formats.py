"""Readers as registered objects (issue 36 point 2): the registry's shape, no format suffix named
outside it, and the statisticians' formats (Stata, SPSS, SAS) read in chunks as arrow batches,
fingerprinted like CSV, their labels declared metadata, bad files refused in one line."""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from dprelease.data import formats
from dprelease.data.cell_hash import cell_hashes
from dprelease.data.engines import count_data
from dprelease.data.fingerprint import FingerprintAccumulator, fingerprint_table
from dprelease.data.formats import readstat
from dprelease.data.formats.declared import declared_metadata
from dprelease.data.read import SizeLimits, read_data
from dprelease.errors import DataError
from dprelease.plan.parse import loads_plan
from helpers import ROOT
from helpers.statfiles import PLAN, REGION, SEX, write

STAT_SUFFIXES = ("dta", "sav", "xpt")

# --- the registry ---------------------------------------------------------------------------


def test_every_suffix_has_one_reader_and_every_reader_a_module() -> None:
    seen: dict[str, str] = {}
    for reader in formats.READERS:
        assert reader.suffixes and all(
            s.startswith(".") and s == s.lower() for s in reader.suffixes
        )
        for suffix in reader.suffixes:
            assert suffix not in seen, (suffix, seen.get(suffix), reader.name)
            seen[suffix] = reader.name
        module = reader.implementation()
        assert callable(module.read_table) and callable(module.describe)
        if reader.declares_metadata:
            assert callable(module.declared)
        if not reader.every_engine and not reader.whole:
            assert callable(module.batches), f"{reader.name}: only Arrow reads it, in batches"
    for suffix in (".dta", ".sav", ".sas7bdat", ".xpt"):
        assert formats.for_suffix(suffix.upper()) is not None
    assert set(formats.upload_types()) == {s.lstrip(".") for s in seen}
    assert all(s in formats.allowed() for s in seen)
    for family in ("CSV", "Parquet", "Excel", "Stata", "SPSS", "SAS"):
        assert family in formats.FORMAT_NAMES


SCANNED = ("dprelease", "ui", "pages")
REGISTRY = ROOT / "dprelease" / "data" / "formats"
LISTING = re.compile(r"CSV, Parquet|Parquet or Excel|Parquet, Excel")
ALLOWED_LITERALS = {
    # the synthetic sample is written as CSV: an output file, not a reader
    ("dprelease/cli/sample.py", ".csv"),
    # the release's own tables/<name>.csv, read back for the notebook: an output, not a reader
    ("dprelease/release/service.py", ".csv"),
}


def _literals(path: Path) -> list[tuple[str, bool]]:
    """(string constant, whether it is an element of a list/tuple/set literal), leaving out
    docstrings (documentation may name formats) and the parts of f-strings (output file
    names such as `tables/{name}.csv`)."""
    tree = ast.parse(path.read_text("utf-8"))
    in_display = {
        id(element)
        for node in ast.walk(tree)
        if isinstance(node, ast.List | ast.Tuple | ast.Set)
        for element in node.elts
    }
    skipped = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
    } | {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [
        (node.value, id(node) in in_display)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skipped
    ]


def test_no_format_suffix_or_format_list_outside_the_registry() -> None:
    """Adding a format is one module and one registry line: nothing else names a suffix (an
    uploader's types, an if-chain on suffixes) or lists the formats in a help text."""
    suffixes = set(formats.suffixes())
    bare = {s.lstrip(".") for s in suffixes}
    found = []
    files = [ROOT / "app.py", *(p for d in SCANNED for p in sorted((ROOT / d).rglob("*.py")))]
    for path in files:
        if REGISTRY in path.parents:
            continue
        where = path.relative_to(ROOT).as_posix()
        for text, listed in _literals(path):
            named = text.lower() in suffixes or (listed and text.lower() in bare)
            if named and (where, text) not in ALLOWED_LITERALS:
                found.append(f"{where}: {text!r}")
            if LISTING.search(text):
                found.append(f"{where}: lists formats in {text[:60]!r}")
    assert not found, "ask dprelease.data.formats instead:\n" + "\n".join(found)


ENGINE_NATIVE = {
    # DuckDB's and Spark's own readers (read_parquet/read_csv, reader.parquet/csv), the Arrow
    # engine's Parquet batches and CSV retries, auto's choice of DuckDB for Parquet
    "dprelease/data/engines/counting.py": 1,
    "dprelease/data/engines/arrow.py": 2,
    "dprelease/data/engines/duckdb.py": 5,
    "dprelease/data/engines/spark.py": 2,
}


def test_reader_names_are_compared_only_where_an_engine_reads_the_format_itself() -> None:
    """`source.fmt == "…"` outside the registry: only the engines' native readers (a new one
    fails here: ask `formats.reader(fmt)` for what it can do instead)."""
    names = {reader.name for reader in formats.READERS}
    found: dict[str, int] = {}
    for path in sorted((ROOT / "dprelease").rglob("*.py")):
        if REGISTRY in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            named = any(isinstance(s, ast.Attribute) and s.attr == "fmt" for s in sides)
            if named and any(isinstance(s, ast.Constant) and s.value in names for s in sides):
                where = path.relative_to(ROOT).as_posix()
                found[where] = found.get(where, 0) + 1
    assert found == ENGINE_NATIVE


# --- the statisticians' formats: same records, same key ----------------------------------------


@pytest.fixture(scope="module")
def survey(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("survey")
    return {suffix: write(folder, suffix) for suffix in ("csv", *STAT_SUFFIXES)}


def test_numbers_are_canonical_in_the_fingerprint() -> None:
    """Stata and SPSS hold 34 as 34.0: the fingerprint hashes both (and the text) as 34."""
    numbers = cell_hashes(pa.array([34.0, 0.5, None]))
    texts = cell_hashes(pa.array(["34", "0.5", ""]))
    assert numbers.tolist() == texts.tolist()


@pytest.mark.parametrize("suffix", STAT_SUFFIXES)
def test_the_same_records_have_the_csvs_ledger_key(survey: dict[str, Path], suffix: str) -> None:
    csv_key = fingerprint_table(read_data(survey["csv"])).key()
    table = read_data(survey[suffix])
    assert table.column_names == ["sex", "region", "age", "share", "city"]
    assert fingerprint_table(table).key() == csv_key
    from_bytes = read_data(survey[suffix].read_bytes(), filename=survey[suffix].name)
    assert fingerprint_table(from_bytes).key() == csv_key  # a dashboard upload
    assert table.column("sex").to_pylist()[:2] == ["1", "2"]  # codes stay codes
    assert read_data(survey[suffix], numeric=["age"]).column("age").type == pa.float64()


@pytest.mark.parametrize("suffix", STAT_SUFFIXES)
def test_chunks_are_arrow_batches_and_the_engine_counts_and_fingerprints_them(
    survey: dict[str, Path], suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks of 7 rows (of 300): the Arrow engine streams them; counts and key as the CSV's."""
    plan = loads_plan(PLAN, "yaml")
    expected = count_data(survey["csv"], plan, new_accumulator=FingerprintAccumulator)
    calls: list[int] = []
    original = readstat.ReadstatFormat._call

    def counted(self, source, where, **options):  # type: ignore[no-untyped-def]
        calls.append(options.get("row_limit", 0))
        return original(self, source, where, **options)

    monkeypatch.setattr(readstat, "chunk_rows", lambda columns: 7)
    monkeypatch.setattr(readstat.ReadstatFormat, "_call", counted)
    result = count_data(survey[suffix], plan, new_accumulator=FingerprintAccumulator)
    assert result.engine == "arrow"
    assert calls.count(7) == 300 // 7 + 1  # bounded reads: never the whole file at once
    for name, cells in expected.counts.counts.items():
        assert np.array_equal(result.counts.counts[name], cells)
    assert result.accumulator is not None and expected.accumulator is not None
    assert result.accumulator.fingerprint.key() == expected.accumulator.fingerprint.key()
    refused = r"The duckdb engine does not read (a Stata|an SPSS|a SAS).*--engine arrow"
    with pytest.raises(DataError, match=refused):
        count_data(survey[suffix], plan, engine="duckdb")


def test_four_byte_floats_keep_their_shortest_text() -> None:
    """A Stata `float` holds 0.1 as 0.100000001490116: read as Stata shows it, 0.1. (pyreadstat
    writes every number as a double, so the chunk conversion is tested on a frame.)"""
    import pandas as pd

    narrow = np.array([0.1, 2.5, np.nan], dtype=np.float32).astype(np.float64)
    frame = pd.DataFrame({"share": narrow, "wide": narrow})
    batch = readstat.frame_batch(frame, ["share", "wide"], {"share"})
    assert batch.column(0).to_pylist() == [0.1, 2.5, None]
    wide = batch.column(1).to_pylist()[0]
    assert wide != 0.1 and abs(wide - 0.1) < 1e-7  # a double column stays exactly as stored


# --- declared metadata ----------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ("dta", "sav"))
def test_value_and_variable_labels_are_declared_metadata(
    survey: dict[str, Path], suffix: str
) -> None:
    declared = declared_metadata(survey[suffix])
    assert declared is not None
    assert declared.variable_labels == {"age": "Age in years", "sex": "Sex"}
    sex, region = declared.codebook("sex"), declared.codebook("region")
    assert sex is not None and region is not None
    assert sex.domain == (1, 2) and dict(sex.labels) == {str(k): v for k, v in SEX.items()}
    assert region.domain == (1, 2, 3, 4) and dict(region.labels)["4"] == REGION[4]
    assert declared.codebook("age") is None


def test_formats_without_value_labels_declare_what_they_have(survey: dict[str, Path]) -> None:
    assert declared_metadata(survey["csv"]) is None
    xpt = declared_metadata(survey["xpt"])
    assert xpt is not None and not xpt.codebooks and xpt.variable_labels["age"] == "Age in years"


# --- SAS .sas7bdat: pyreadstat cannot write one and none ships in the venv ---------------------

SAS7BDAT_HEAD = bytes.fromhex("000000000000000000000000c2ea8160b31411cfbd92080009c7318c181f1011")


def test_sas7bdat_is_recognised_and_its_chunks_converted(
    tmp_path: Path, survey: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyreadstat's read_sas7bdat replaced by a reader of the .dta's frame (same chunking
    arguments): the module's conversion gives the CSV's key."""
    import pyreadstat

    path = tmp_path / "survey.sas7bdat"
    path.write_bytes(SAS7BDAT_HEAD + b"\x00" * 1024)
    stand_in = survey["dta"]

    def read_sas7bdat(target, **options):  # type: ignore[no-untyped-def]
        assert isinstance(target, str | io.BytesIO)
        return pyreadstat.read_dta(str(stand_in), **options)

    monkeypatch.setattr(pyreadstat, "read_sas7bdat", read_sas7bdat)
    monkeypatch.setattr(readstat, "chunk_rows", lambda columns: 50)
    assert formats.detect(path.read_bytes()[:64], path.name, "x").name == "sas7bdat"
    csv_key = fingerprint_table(read_data(survey["csv"])).key()
    assert fingerprint_table(read_data(path)).key() == csv_key


# --- bad input: one line, naming the file and what is allowed ------------------------------------


def test_a_corrupt_dta_is_one_line_naming_the_file_and_the_formats(
    tmp_path: Path, survey: dict[str, Path]
) -> None:
    broken = tmp_path / "broken.dta"
    broken.write_bytes(survey["dta"].read_bytes()[:400])
    with pytest.raises(DataError) as error:
        read_data(broken)
    message = str(error.value)
    assert "'broken.dta'" in message and "Stata" in message and ".sav" in message
    assert "\n" not in message


def test_a_sav_with_a_dta_extension_is_refused_from_its_content(
    tmp_path: Path, survey: dict[str, Path]
) -> None:
    renamed = tmp_path / "really_spss.dta"
    renamed.write_bytes(survey["sav"].read_bytes())
    refused = r"'really_spss.dta' has the extension \.dta but its content is an SPSS file.*\.xpt"
    with pytest.raises(DataError, match=refused):
        read_data(renamed)
    as_csv = tmp_path / "spss.csv"
    as_csv.write_bytes(survey["sav"].read_bytes())
    with pytest.raises(DataError, match="content is an SPSS file"):
        read_data(as_csv)


@pytest.mark.parametrize("suffix", STAT_SUFFIXES)
def test_a_large_file_is_refused_from_its_header_before_any_record(
    survey: dict[str, Path], suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[dict[str, object]] = []
    original = readstat.ReadstatFormat._call

    def watched(self, source, where, **options):  # type: ignore[no-untyped-def]
        reads.append(options)
        return original(self, source, where, **options)

    monkeypatch.setattr(readstat.ReadstatFormat, "_call", watched)
    if suffix == "xpt":  # a transport file announces no rows: refused while reading
        with pytest.raises(DataError, match="more than 100 rows"):
            read_data(survey[suffix], max_rows=100)
        assert sum("row_limit" in r for r in reads) == 1  # one chunk of at most 1 M rows
        return
    with pytest.raises(DataError, match=r"more than 100 rows \(300 announced"):
        read_data(survey[suffix], max_rows=100)
    assert reads and all(r.get("metadataonly") for r in reads)
    reads.clear()
    module = formats.for_suffix(survey[suffix].suffix)
    assert module is not None  # rows × (8 bytes, or a text column's width) from the header:
    with pytest.raises(DataError, match="decodes to at least"):  # past the size on disk
        module.implementation().describe(survey[suffix], b"", "x", SizeLimits(1_000, None))
    assert all(r.get("metadataonly") for r in reads)
    with pytest.raises(DataError, match="more than 100 rows"):  # the engines' describe too
        count_data(survey[suffix], loads_plan(PLAN, "yaml"), limits=SizeLimits(max_rows=100))
