"""Bad input through every page: no exception, a clear message where relevant, user text literal.

Each page is opened once (AppTest, the tiny pre-training model, so the fill-mask and next-sentence
heads run) and fed every bad string in turn, as a user typing into the page would. Then
malformed URL parameters. "Literal" means: wherever Streamlit renders Markdown (markdown,
captions, alerts, headings, labels), the user's text appears only escaped by
``components.services.text.literal`` — never as live Markdown or HTML, never in an ``unsafe_allow_html``
element or ``st.html``.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from bertlens.models import BUNDLED_MODEL, LOAD_COUNTS
from components.services.text import literal
from tests.conftest import APPTEST_TIMEOUT, ROOT, drawn_charts

HUGE = 10_000
BAD_STRINGS: dict[str, str] = {
    "empty": "",
    "space": " ",
    "whitespace mix": "\n\n\t   \r\n",
    # Shows nothing, and the tokenizer drops it all (QA: pages analysed [CLS] [SEP] as if something were typed)
    "invisible characters": "\u200b\u00ad\u2060\ufeff\u202e \u200b",
    "10,000 characters": ("word " * (HUGE // 5)).strip(),
    "over 512 tokens": " ".join(["hello"] * 600),
    "60,000 characters": "a b " * 15_000,
    "only [MASK]": "[MASK]",
    "two masks only": "[MASK] [MASK]",
    "20 masks": " ".join(["[MASK]"] * 20),
    "20 masks glued": "[MASK]" * 20,
    "lower-case mask": "the [mask] is lower case",
    "special tokens": "[CLS] [SEP] [PAD] [UNK] [unused0]",
    "only [SEP]": "[SEP]",
    "emoji": "😀🤖🎉",
    "emoji sequences": "I ❤️ BERT 👍🏽 family 👨‍👩‍👧 flag 🇫🇷",
    "arabic": "مرحبا بالعالم، هذا نص عربي",
    "hebrew": "שלום עולם זה טקסט בעברית",
    "bidi override": "abc \u202eevil\u202c def \u2067isolate\u2069",
    "zero-width inside": "zero\u200bwidth\u200cjoin\u200dword",
    "zero-width only": "\u200b\u200c\u200d",
    "byte order mark": "\ufeffstarts with a BOM",
    "cjk no spaces": "我爱自然语言处理没有空格的句子很长很长",
    "japanese": "日本語のテキストです。カタカナも。",
    "korean": "안녕하세요 세계",
    "thai": "สวัสดีชาวโลกภาษาไทยไม่มีช่องว่าง",
    "script tag": "<script>alert('x')</script>",
    "html bold": "<b>bold</b> and <i>italic</i>",
    "img onerror": '<img src=x onerror="alert(1)">',
    "iframe": '<iframe src="https://example.com"></iframe>',
    "markdown": "**bold** _italic_ `code` [link](https://example.com)",
    "markdown heading": "# Heading\n## Sub heading",
    "markdown table": "| a | b |\n|---|---|\n| 1 | 2 |",
    "latex": "$x^2$ and $$\\int_0^1 f$$",
    "streamlit directives": ":red[colour] :material/home: :smile: :balloon:",
    "code fence": "```\ncode block\n```",
    "quote and list": "> quote\n- item one\n- item two",
    "html entity": "&lt;b&gt; &amp; &#60;",
    "quotes": 'She said "hi" and it\'s "fine"',
    "one enormous word": "a" * 5_000,
    "enormous real word": "supercalifragilisticexpialidocious" * 60,
    "backslashes": "\\n escaped \\t backslashes \\\\ end\\",
    "nul byte": "NUL\x00byte inside",
    "control characters": "bell\x07 escape\x1b[31mred\x1b[0m",
    "format strings": "%s %d {0} {text} {{}}",
    "sql": "' OR 1=1; DROP TABLE students; --",
    "path": "../../etc/passwd",
    "nan": "nan",
    "none": "None",
    "digits": "12345 67890 3.14159",
    "punctuation": "!!!???...,,,;;;",
    "combining accents": "e\u0301 e\u0300 n\u0303 café naïve",
    "symbols": "Ω≈ç√∫˜µ≤≥÷ ∞ ©®™",
    "math alphanumerics": "𝕳𝖊𝖑𝖑𝖔 𝓦𝓸𝓻𝓵𝓭",
    "carriage returns": "line1\r\nline2\rline3",
    "mixed markup and mask": "text with [MASK] and <b>html</b> and *stars*",
    "tabs around mask": "\t[MASK]\t",
    "single character": "A",
    "pipe separators": "a | b | c",
}
# Strings that Markdown or HTML would turn into something else: they must never be rendered as such.
MARKUP = [
    "script tag", "html bold", "img onerror", "iframe", "markdown", "markdown heading", "markdown table", "latex",
    "streamlit directives", "code fence", "quote and list", "html entity", "mixed markup and mask", "backslashes",
    "quotes",
]  # fmt: skip
SHOWN_RAW_BY_PLOTLY = ("&quot;", "&#x27;", "&#39;")  # entities plotly draws as typed: escaping quotes shows these

# page file -> the inputs a user types there (widget kind, key)
PAGE_INPUTS = {
    "pages/tokenizer.py": [("text_input", "text")],
    "pages/anatomy.py": [("text_input", "text")],
    "pages/fill_mask.py": [("text_input", "text")],
    "pages/next_sentence.py": [("text_input", "a"), ("text_input", "b")],
    "pages/attention.py": [("text_input", "text")],
    "pages/senses.py": [("text_input", "text"), ("text_input", "senses_word")],
}
# The tab of a page that reads the shared sentence (the page's first tab unless named here).
SENTENCE_TAB = {"pages/anatomy.py": {"anatomy_tab": "Embeddings"}}


def rendered_markdown(at: AppTest) -> list[str]:
    """Every text Streamlit renders as Markdown on the page (and in the sidebar)."""
    texts = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "warning", "info", "error", "success", "toast"):
        texts += [str(element.value) for element in getattr(at, kind)]
    texts += [str(e.label) for e in at.expander] + [str(e.label) for e in at.metric] + [str(t.label) for t in at.tabs]
    return texts


def html_elements(at: AppTest) -> list[str]:
    """Bodies Streamlit renders as HTML: ``st.html`` and ``unsafe_allow_html`` markdown."""
    return [str(e.proto.body) for e in at.get("html")] + [
        str(e.value) for e in at.markdown if getattr(e.proto, "allow_html", False)
    ]


def literal_problems(at: AppTest, text: str) -> list[str]:
    """Places where ``text`` (or a long piece of it) is rendered live instead of literally."""
    problems = []
    pieces = {text.strip(), *(line.strip() for line in text.splitlines() if len(line.strip()) > 3)}
    for body in rendered_markdown(at):
        remainder = body.replace(literal(text), "")
        problems += [f"raw {piece!r} in markdown {body[:120]!r}" for piece in pieces if piece and piece in remainder]
    for body in html_elements(at):
        problems += [f"{piece!r} inside HTML {body[:120]!r}" for piece in pieces if piece and piece in body]
    for chart in drawn_charts(at):
        problems += [f"{raw} in a chart" for raw in SHOWN_RAW_BY_PLOTLY if raw in chart.spec and raw not in text]
    return problems


def type_into(at: AppTest, inputs, text: str) -> AppTest:
    for kind, key in inputs:
        getattr(at, kind)(key=key).input(text)
    return at.run()


@pytest.mark.parametrize("page", list(PAGE_INPUTS))
def test_every_bad_string_on_every_page(open_page, tiny_pretraining_dir, page):
    """Type each bad string into the page: no exception, and markup is shown literally."""
    at = open_page(page, tiny_pretraining_dir, **SENTENCE_TAB.get(page, {}))
    assert not at.exception, at.exception
    failures = []
    for name, text in BAD_STRINGS.items():
        type_into(at, PAGE_INPUTS[page], text)
        if at.exception:
            failures.append(f"{name}: {at.exception[0].message}")
            continue
        # The page really read this string (a browser refuses more than a field's max_chars).
        widgets = [getattr(at, kind)(key=key) for kind, key in PAGE_INPUTS[page]]
        held = [w.value for w in widgets if not w.proto.max_chars or len(text) <= w.proto.max_chars]
        if held != [text] * len(held):
            failures.append(f"{name}: the inputs hold {[value[:60] for value in held]!r}")
        elif name in MARKUP:
            failures += [f"{name}: {problem}" for problem in literal_problems(at, text)]
    assert not failures, "\n".join(failures)


def alerts(at: AppTest) -> str:
    return " ".join(str(e.value) for kind in ("warning", "info", "error") for e in getattr(at, kind))


@pytest.mark.parametrize("page", [p for p, inputs in PAGE_INPUTS.items() if ("text_input", "text") in inputs])
@pytest.mark.parametrize("name", ["empty", "whitespace mix", "invisible characters"])
def test_empty_sentence_says_so(open_page, tiny_pretraining_dir, page, name):
    at = type_into(
        open_page(page, tiny_pretraining_dir, **SENTENCE_TAB.get(page, {})), [("text_input", "text")], BAD_STRINGS[name]
    )
    assert not at.exception
    if page != "pages/senses.py":  # there the own sentence is optional
        assert alerts(at), f"{page}: no message for an empty sentence"


@pytest.mark.parametrize("name", ["empty", "space", "invisible characters"])
def test_next_sentence_empty_pair_says_so(open_page, tiny_pretraining_dir, name):
    at = type_into(open_page("pages/next_sentence.py", tiny_pretraining_dir), [("text_input", "a")], BAD_STRINGS[name])
    assert not at.exception
    assert alerts(at)
    assert not at.metric  # no verdict without sentence A


@pytest.mark.parametrize("page", ["pages/tokenizer.py", "pages/anatomy.py", "pages/fill_mask.py", "pages/attention.py"])
def test_over_512_tokens_is_truncated_with_a_notice(open_page, tiny_pretraining_dir, page):
    at = open_page(
        page, tiny_pretraining_dir, text=BAD_STRINGS["over 512 tokens"] + " [MASK].", **SENTENCE_TAB.get(page, {})
    )
    assert not at.exception
    assert "512" in alerts(at), alerts(at)


def test_fill_mask_without_a_mask_says_how(open_page, tiny_pretraining_dir):
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, text="no mask in this sentence")
    assert not at.exception
    assert "[MASK]" in alerts(at).replace("\\", "")


def test_fill_mask_many_masks_are_predicted_with_a_warning(open_page, tiny_pretraining_dir):
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, text=BAD_STRINGS["20 masks"])
    assert not at.exception
    assert at.warning, "no warning for 20 masks"


@pytest.mark.parametrize("page", ["pages/fill_mask.py", "pages/next_sentence.py"])
@pytest.mark.parametrize("name", ["only [MASK]", "script tag", "over 512 tokens", "emoji"])
def test_bad_strings_on_a_model_without_heads(open_page, page, name):
    """The bundled encoder has no MLM/NSP head: the explanation, never an exception."""
    params = {"a": BAD_STRINGS[name]} if page.endswith("next_sentence.py") else {"text": BAD_STRINGS[name]}
    at = open_page(page, BUNDLED_MODEL, **params)
    assert not at.exception
    if name in MARKUP:
        assert not literal_problems(at, BAD_STRINGS[name])


# --- malformed URL parameters ------------------------------------------------------------------

MALFORMED_LINKS = [
    ("pages/attention.py", {"layer": "99"}, "layer"),
    ("pages/attention.py", {"layer": "-1"}, "layer"),
    ("pages/attention.py", {"head": "-1"}, "head"),
    ("pages/attention.py", {"head": "abc"}, "head"),
    ("pages/attention.py", {"head": "1.5"}, "head"),
    ("pages/attention.py", {"layer": "1e9", "head": "99999999999999999999"}, "layer"),
    ("pages/attention.py", {"tab": "nonsense"}, "tab"),
    ("pages/fill_mask.py", {"text": "A [MASK] here.", "k": "abc"}, "k"),
    ("pages/fill_mask.py", {"text": "A [MASK] here.", "k": "0"}, "k"),
    ("pages/fill_mask.py", {"text": "A [MASK] here.", "k": "100000"}, "k"),
    ("pages/fill_mask.py", {"text": "[MASK] and [MASK]", "at_mask": "7"}, "at_mask"),
    ("pages/fill_mask.py", {"text": "A [MASK] here.", "at_mask": "9"}, "at_mask"),  # one mask: 1 only
    ("pages/anatomy.py", {"anatomy_tab": "Embeddings", "pos": "999"}, "pos"),
    ("pages/anatomy.py", {"anatomy_tab": "Embeddings", "pos": "x"}, "pos"),
    ("pages/anatomy.py", {"anatomy_tab": "x"}, "anatomy_tab"),
    ("pages/tokenizer.py", {"tokenizer_tab": "<b>x</b>"}, "tokenizer_tab"),
    ("pages/next_sentence.py", {"nsp_tab": "Verdicts"}, "nsp_tab"),
    ("pages/senses.py", {"senses_tab": "3D"}, "senses_tab"),
    ("pages/senses.py", {"preset": "unknown-preset"}, "preset"),
    ("pages/senses.py", {"layer": "99"}, "layer"),
    ("pages/senses.py", {"projection": "tSNE 9D"}, "projection"),
    ("pages/senses.py", {"source": "Telepathy"}, "source"),
]


@pytest.mark.parametrize("page, params, param", MALFORMED_LINKS, ids=lambda v: str(v) if isinstance(v, str) else None)
def test_malformed_link_parameter_is_named_in_a_warning(open_page, tiny_pretraining_dir, page, params, param):
    at = open_page(page, tiny_pretraining_dir, **params)
    assert not at.exception, at.exception
    assert f"`{param}`" in " ".join(w.value for w in at.warning), [w.value for w in at.warning]


def test_a_mask_number_a_one_mask_sentence_cannot_use_is_named_once(open_page, tiny_pretraining_dir):
    """It stayed in the link (and the class link) with no picker to take it out, and was warned about on every run."""
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, text="A [MASK] here.", at_mask="9")
    assert "`at_mask`" in " ".join(w.value for w in at.warning) and "at_mask" not in at.query_params
    at.slider(key="k").set_value(5).run()
    assert not at.exception and not any("`at_mask`" in w.value for w in at.warning)


@pytest.mark.parametrize("page", ["pages/tokenizer.py", "pages/next_sentence.py", "pages/home.py"])
@pytest.mark.parametrize("model", ["no-such/model", "../../etc", "<b>x</b>"])
def test_unoffered_model_in_the_link_is_named_and_not_loaded(monkeypatch, tiny_pretraining_dir, page, model):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", str(tiny_pretraining_dir))
    at = AppTest.from_file(str(ROOT / page), default_timeout=APPTEST_TIMEOUT)
    at.query_params["model"] = model
    at.run()
    assert not at.exception, at.exception
    assert "`model`" in " ".join(w.value for w in at.warning)
    assert LOAD_COUNTS[model] == 0
    assert not literal_problems(at, model)


@pytest.mark.parametrize("page", list(PAGE_INPUTS) + ["pages/home.py"])
def test_garbage_in_every_parameter_at_once(open_page, tiny_pretraining_dir, page):
    """Every known parameter malformed, plus unknown ones: the page still renders."""
    garbage = {key: "<b>x</b>" for key in ("layer", "head", "k", "pos", "tab", "preset", "projection", "source",
                                          "at_mask", "mean", "view", "focus", "targets", "unknown", "b")}  # fmt: skip
    at = open_page(page, tiny_pretraining_dir, text="A fine [MASK] sentence.", **garbage)
    assert not at.exception, at.exception
    assert not literal_problems(at, "<b>x</b>")
