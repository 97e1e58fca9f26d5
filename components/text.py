"""Show user text literally: never as Markdown, never as HTML."""

from __future__ import annotations

import html
import re

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


def literal(text: str) -> str:
    """Escape ``text`` so ``st.markdown``/``st.warning`` show it exactly as typed."""
    escaped = _MARKDOWN_SPECIALS.sub(r"\\\1", text)
    return _LINE_BREAKS.sub(" ", escaped)  # CR is a line break in Markdown too: "x\r===" would be a heading


def code_span(text: str) -> str:
    """``text`` as inline code (code spans show everything literally, except backticks)."""
    return f"`{text.replace('`', 'ˋ')}`"


def chart_text(text: str) -> str:
    """``text`` for a plotly label, title or hover: plotly draws a few HTML tags (``<b>``, ``<br>``) and reads
    ``&lt;``, ``&gt;`` and ``&amp;``, but shows ``&quot;`` as typed, so quotes are left alone."""
    return html.escape(text, quote=False)
