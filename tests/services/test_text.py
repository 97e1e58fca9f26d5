"""User text is shown literally (``components.services.text``): rendered as Markdown, it comes out exactly as typed.

The page tests check that user text appears only as ``literal(text)``; these check what ``literal`` itself gives
once a Markdown renderer reads it (markdown-it, CommonMark with GitHub's tables and strikethrough, as Streamlit's
renderer reads them), so an escape it leaves out is caught here.
"""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

from components.services.text import WORD_JOINER, chart_text, code_span, literal

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])

TYPED = [
    "**bold** and *italic* and __under__ and _one_",
    "<b>bold</b> <script>alert(1)</script> <img src=x onerror=alert(1)>",
    "[link](https://example.com) ![img](x.png) <https://example.com>",
    "`code` and ``double``",
    "# heading",
    "- item",
    "+ item",
    "1. item",
    "> quote",
    "~~struck~~",
    "| a | b |",
    "a\\*b back\\slash",
    "&lt;b&gt; &amp; &#60;",
    "x \\ y ! # $ % & ( ) * + - . / : ; < = > ? @ [ ] ^ _ { | } ~",
]


def paragraph(text: str) -> str:
    """How a renderer shows ``text`` typed as a paragraph of plain words (no Markdown at all)."""
    return f"<p>{escapeHtml(text)}</p>\n"


def rendered(text: str) -> str:
    """``literal(text)`` through the renderer, without the invisible word joiners that keep addresses plain."""
    return MARKDOWN.render(literal(text)).replace(WORD_JOINER, "")


@pytest.mark.parametrize("text", TYPED)
def test_literal_text_renders_as_typed(text):
    assert rendered(text) == paragraph(text)


@pytest.mark.parametrize("text", ["a\nb", "a\r\nb", "a\rb", "warning\r===\r", "x\r- item", "a\n# heading"])
def test_a_line_break_in_literal_text_is_a_space_not_a_new_block(text):
    """A link's ``%0D===%0D`` would turn a warning into a heading; any line break shows as a space."""
    typed_on_one_line = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ").strip()
    assert rendered(text) == paragraph(typed_on_one_line)


@pytest.mark.parametrize("text", [":red[colour]", ":material/home:", "$x^2$", "~strike~"])
def test_streamlits_own_markup_characters_are_escaped(text):
    """Streamlit also reads ``:colour[…]`` and ``:icon:`` directives, ``$`` maths and ``~`` (markdown-it does not):
    each of their characters comes backslash-escaped, so none opens markup."""
    escaped = literal(text)
    for char in set(text) & set(":$~[]"):
        assert escaped.count("\\" + char) == text.count(char), (char, escaped)
    assert escaped.replace("\\", "").replace(WORD_JOINER, "") == text


# GitHub's autolink literals, as Streamlit's renderer finds them in text (mdast-util-gfm-autolink-literal), and
# Streamlit's icon shortcode: they work on the text after its escapes, so escaping alone left them live.
AUTOLINKS = [
    re.compile(r"(?:^|[\s\W])(?:https?://|www\.)[-.\w]+", re.IGNORECASE),
    re.compile(r"[-.\w+]+@[-\w]+(?:\.[-\w]+)+"),
    re.compile(r":material/\w+:"),
]


@pytest.mark.parametrize(
    "text", ["www.example.com", "WWW.Example.org/x", "http://example.com", "see https://x.y/z", "me@example.com",
             "mailto:a@b.co", ":material/home:"],
)  # fmt: skip
def test_addresses_and_icons_in_literal_text_stay_plain_text(text):
    """The page showed a link (or an icon) made from the user's text; a word joiner breaks each pattern."""
    assert any(pattern.search(text) for pattern in AUTOLINKS)  # the pattern matches what was typed
    unescaped = literal(text).replace("\\", "")
    assert not any(pattern.search(unescaped) for pattern in AUTOLINKS)
    assert unescaped.replace(WORD_JOINER, "") == text  # nothing else changed


def test_a_colon_in_words_gets_no_joiner():
    """A lesson's choice "IsNext: B follows A" quoted back must read (and copy) as the choice itself."""
    assert literal("IsNext: B follows A") == "IsNext\\: B follows A"


@pytest.mark.parametrize(
    "control", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
)
def test_bidi_controls_cannot_reorder_the_message_around_user_text(control):
    """An override in the user's word (``abc<U+202E>def``) reversed the rest of the app's sentence; BERT's own
    tokenizer drops these format characters, so the message shows what the model reads."""
    assert literal(f"abc{control}def") == "abcdef" and chart_text(f"<{control}>") == "&lt;&gt;"
    assert literal("שלום \u200f world") == "שלום \u200f world"  # a right-to-left mark only marks: kept


@pytest.mark.parametrize(
    "text, one_line",
    [("a`b",) * 2, ("``",) * 2, ("`start",) * 2, ("end`",) * 2, ("plain",) * 2,
     ("candid\n\n# ates", "candid  # ates"), ("a\r\n\r\n- b", "a  - b"), ("a\r\rb", "a  b"), ("x\u202ey", "xy")],
)  # fmt: skip
def test_a_code_span_holds_the_whole_text_on_one_line(text, one_line):
    """A backtick in a model name or a parameter once ended the code span early: the rest rendered as Markdown.
    So did a blank line: a link's parameter named ``candid\\n\\n# ates`` (close enough to ``candidates`` to be
    named in the page's message) drew a heading."""
    rendered = MARKDOWN.render(f"The link's {code_span(text)} parameter")
    assert rendered.count("<code>") == 1 and rendered.startswith("<p>The link's <code>")
    assert rendered.endswith("</code> parameter</p>\n")
    shown = rendered.removeprefix("<p>The link's <code>").removesuffix("</code> parameter</p>\n")
    assert shown.replace("ˋ", "`") == escapeHtml(one_line)


def test_chart_text_escapes_tags_and_leaves_quotes_as_typed():
    """Plotly draws ``<b>`` and reads entities, but shows ``&quot;`` as typed."""
    assert chart_text('<b>x</b> & "y" it\'s') == '&lt;b&gt;x&lt;/b&gt; &amp; "y" it\'s'
