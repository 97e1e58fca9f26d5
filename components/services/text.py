"""Show user text literally: never as Markdown, never as HTML."""

from __future__ import annotations

import html
import re

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
# Explicit bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): invisible, and inside a
# message they reorder the app's own words around the user's text ("abc<U+202E>def" reversed the rest of the
# line). BERT's tokenizer drops them too (format characters), so the message shows what the model reads.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Streamlit's Markdown turns web and e-mail addresses into links, and :material/…: into icons, even when escaped
# (both work on the text after its escapes). An invisible word joiner inside "www.", "://" and ":material/", and
# before "@", keeps them the user's plain text (any other ":" is left alone: "IsNext: B follows A").
_LINK_STARTS = re.compile(r"(?i)(?<=www)(?=\.)|(?=@)|(?<=:)(?=//|material/)")
WORD_JOINER = "\u2060"


def literal(text: str) -> str:
    """Escape ``text`` so ``st.markdown``/``st.warning`` show it exactly as typed: no Markdown, no HTML, no links
    or icons, no bidi controls reordering the message around it."""
    plain = _LINK_STARTS.sub(WORD_JOINER, BIDI_CONTROLS.sub("", text))
    escaped = _MARKDOWN_SPECIALS.sub(r"\\\1", plain)
    return _LINE_BREAKS.sub(" ", escaped)  # CR is a line break in Markdown too: "x\r===" would be a heading


def bidi_isolate(text: str) -> str:
    """``text`` in a direction of its own (Unicode's first-strong isolate, U+2068 … U+2069)."""
    return f"\u2068{text}\u2069"


def isolated(text: str) -> str:
    """``literal(text)`` in a direction of its own: in a list of right-to-left words ("שלום → ש ##ל ##ום; עולם →
    …") the items kept their order and each arrow its side."""
    return bidi_isolate(literal(text))


def code_span(text: str) -> str:
    """``text`` as inline code, on one line (a code span shows everything literally except backticks, and ends at a
    blank line: a link's parameter named ``x\\n\\n# y`` drew a heading)."""
    return f"`{_LINE_BREAKS.sub(' ', BIDI_CONTROLS.sub('', text)).replace('`', 'ˋ')}`"


# A chart axis of probabilities or weights: ticks read 0.0001 (decimals, 2 significant figures), not plotly's SI
# "100μ", which reads as a unit.
SHARE_TICKS = ".2~r"


def chart_text(text: str) -> str:
    """``text`` for a plotly label, title or hover: plotly draws a few HTML tags (``<b>``, ``<br>``) and reads
    ``&lt;``, ``&gt;`` and ``&amp;``, but shows ``&quot;`` as typed, so quotes are left alone."""
    return html.escape(BIDI_CONTROLS.sub("", text), quote=False)
