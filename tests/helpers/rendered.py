"""What a page renders as Markdown, and the check that none of it makes an image, a link or
HTML (issues 11 and 25.4): run on every page with hostile names, labels, values and file names."""

from __future__ import annotations

from collections.abc import Iterator

from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

MARKDOWN = MarkdownIt("commonmark").enable("table")
# Element protos whose text Streamlit renders as Markdown (labels, bodies, options of radios).
MARKDOWN_FIELDS = {"body", "label", "help", "options", "caption", "placeholder"}


def _strings(message, field: str = "") -> Iterator[tuple[str, str]]:
    """Every (field name, text) in a protobuf message, nested messages included."""
    for descriptor, value in message.ListFields():
        single = isinstance(value, str | bytes) or hasattr(value, "ListFields")
        values = [value] if single or not hasattr(value, "__iter__") else value
        for item in values:
            if isinstance(item, str):
                yield descriptor.name, item
            elif hasattr(item, "ListFields"):
                yield from _strings(item, descriptor.name)


def rendered_markdown(app: AppTest) -> list[str]:
    """The texts on the page that Streamlit renders as Markdown, tables' cells included."""
    texts: list[str] = []
    for node in [*app.main, *app.sidebar]:
        proto = getattr(node, "proto", None)
        if proto is None or getattr(node, "type", "") == "html":  # our own script, not Markdown
            continue
        texts += [text for name, text in _strings(proto) if name in MARKDOWN_FIELDS]
        if getattr(node, "type", "") == "table":  # st.table renders every cell as Markdown
            frame = node.value
            texts += [str(c) for c in frame.columns]
            texts += [str(v) for v in frame.to_numpy().ravel()]
    return texts


def assert_no_live_markdown(app: AppTest, host: str = "leak.example") -> int:
    """No rendered text makes an image, a link or raw HTML; returns how many escaped plants
    (texts naming `host`) were seen."""
    seen = 0
    for text in rendered_markdown(app):
        html = MARKDOWN.render(text)
        assert "<img" not in html and "<a " not in html, (text, html)
        assert "<script" not in html and "<iframe" not in html, (text, html)
        seen += host in text
    return seen
