"""The Risk page's network section (issue 28, part 3), driven with AppTest: upload an edge
list, read its k-degree risk, release a DP degree distribution (charged once), bad input."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dprelease.ledger.store import Ledger

ROOT = Path(__file__).resolve().parents[2]
EDGES = (
    b"from,to\nAlice,Bob\nAlice,Cathy\nAlice,Ed\nCathy,Bob\nCathy,Dave\nCathy,Fred\n"
    b"Cathy,Gina\nBob,Ed\nDave,Fred\nGina,Fred\nBob,Alice\n"
)


def open_page() -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    app.run()
    app.switch_page("pages/risk.py")
    app.run()
    assert not app.exception, app.exception
    return app


def upload(app: AppTest, content: bytes, name: str = "mail.csv") -> AppTest:
    app.file_uploader(key="graph_upload").upload(name, content, "text/csv")
    app.run()
    assert not app.exception, app.exception
    return app


def metric(app: AppTest, label: str) -> str:
    return next(m.value for m in app.metric if m.label == label)


def test_upload_shows_k_degree_risk_and_the_unique_node():
    app = upload(open_page(), EDGES)
    assert metric(app, "k-degree (smallest degree class)") == "1"
    assert metric(app, "nodes unique by degree") == "1"
    assert metric(app, "nodes / edges") == "7 / 10"
    text = " ".join(str(m.value) for m in app.markdown)
    assert "edges to add" in text and "1 repeated edges were merged" in text
    assert any("Cathy" in str(t.value) for t in app.table)  # the data holder's own view
    assert not app.get("download_button")  # nothing before a release
    app.number_input(key="graph_k").set_value(3).run()
    assert metric(app, "nodes in degree classes < 3") == "1"


def test_release_is_charged_once_and_offered_as_a_download(ledger_file):
    app = upload(open_page(), EDGES)
    app.radio(key="graph_unit").set_value("node")  # in a form: sent with the submit
    app.number_input(key="graph_epsilon").set_value(0.5)
    app.number_input(key="graph_max_degree").set_value(3)
    submit = next(b for b in app.button if str(b.key).startswith("FormSubmitter:graph_release"))
    submit.click().run()
    assert not app.exception, app.exception
    assert not app.error
    charts = [c for c in app.get("plotly_chart") if "Released degree distribution" in c.proto.spec]
    assert len(charts) == 1
    (button,) = app.get("download_button")
    assert any("charged ε = 0.5" in str(c.value) and "Δ₁ = 7" in str(c.value) for c in app.caption)
    book = Ledger(ledger_file)
    ((key, _),) = book.datasets()
    assert book.balance(key).spent_epsilon == 0.5
    app.run()  # a rerun draws nothing and charges nothing
    assert Ledger(ledger_file).balance(key).releases == 1
    del button


def test_released_zip_has_the_csv_and_metadata_only():
    from dprelease.graph.edges import read_edges
    from dprelease.graph.release import DegreeQuery, uncharged_degree_release
    from ui.graph_view import files_zip

    published = uncharged_degree_release(
        read_edges(EDGES, filename="mail.csv"), DegreeQuery(1.0, 4)
    )
    archive = zipfile.ZipFile(io.BytesIO(files_zip(published.files)))
    assert sorted(archive.namelist()) == ["degree_histogram.csv", "metadata.json"]
    assert json.loads(archive.read("metadata.json"))["privacy_unit"] == "edge"


def test_a_self_loop_is_one_error_and_the_page_goes_on():
    app = upload(open_page(), b"a,b\nx,y\ny,y\n", "loops.csv")
    assert len(app.error) == 1 and "self-loop" in app.error[0].value
    assert "k (smallest class)" in [m.label for m in app.metric]  # the rest of the page runs
    app = upload(app, EDGES)
    assert not app.error
    assert metric(app, "nodes / edges") == "7 / 10"
