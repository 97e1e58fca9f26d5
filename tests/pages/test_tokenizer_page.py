"""The tokenizer page opened as a shared link (URL parameters), on the bundled encoder."""

import json

import numpy as np
import pytest
from transformers import AutoTokenizer

from bertlens.models import bundled_model_path
from bertlens.synthetic import TINY_CONFIG, random_bert_config, save_random_bert
from tests.conftest import assert_shows, drawn_charts, tables
from tests.pages.test_attention_page import typed

PAGE = "pages/tokenizer.py"


def frame(at, column):
    """The first table on the page that has ``column``."""
    return next(d for d in tables(at) if column in d.columns)


def shown(at) -> str:
    return " ".join(
        str(e.value)
        for kind in ("markdown", "caption", "warning", "info", "success", "error")
        for e in getattr(at, kind)
    )


def test_seed_sentence_from_the_link(open_page):
    at = open_page(PAGE, text="Sinan loves a beautiful day")
    assert not at.exception
    table = frame(at, "token_type_ids")
    assert table["id"].tolist() == [101, 8254, 2319, 7459, 1037, 3376, 2154, 102]
    assert table["split word"].tolist() == [False, True, True, False, False, False, False, False]
    (markup,) = [e.value for e in at.get("html") if 'aria-label="tokens"' in e.value]
    assert ">8254</td>" in markup and "8,254" not in markup  # plain integers, no thousands separators
    assert "WordPiece cut 1 word into pieces" in shown(at)
    assert [m.value for m in at.metric][:3] == ["5", "8", "1"]
    assert "[CLS] sinan loves a beautiful day [SEP]" in [c.value for c in at.text]


def test_the_tokens_csv_has_the_columns_in_the_order_shown(open_page, csv_downloads):
    at = open_page(PAGE, text="Sinan loves a beautiful day")
    shown_table = frame(at, "token_type_ids")
    assert list(csv_downloads["tokens"].columns) == list(shown_table.columns)
    # What the model reads, and the split-word mark the caption points to, come first: in presentation mode the
    # table is wider than the page, and token_type_ids and attention_mask were off-screen at its end (QA).
    assert list(shown_table.columns[:6]) == [
        "position",
        "token",
        "id",
        "split word",
        "token_type_ids",
        "attention_mask",
    ]
    assert csv_downloads["tokens"]["id"].tolist() == shown_table["id"].tolist()


def test_words_are_counted_between_spaces(open_page):
    at = open_page(PAGE, text="It didn't rain, did it?")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Words (split at spaces)"] == "5"  # not 9: didn ' t , ? are not five more words
    assert_shows(metrics["Tokens per word"], "{}", 9 / 5, places=2)
    assert "WordPiece cut no word into pieces" in shown(at)


def test_counts_over_the_token_limit_say_they_are_of_the_part_analysed(open_page):
    """600 words: the model reads 510 of them; the metrics said "Words (split at spaces): 510"."""
    at = open_page(PAGE, text="word " * 600)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Words analysed (split at spaces)"] == "510" and metrics["Tokens analysed (with special)"] == "512"
    assert "Words analysed cut into ## pieces" in metrics
    assert any("602 tokens long" in w.value and "512 tokens are analysed" in w.value for w in at.warning)


def test_line_breaks_in_a_link_become_spaces(open_page):
    """A one-line input cannot show a line break: the browser dropped it, joining "line" and "second" in the
    box while the page analysed them apart."""
    at = open_page(PAGE, text="first line\rsecond [MASK] line\r\nthird")
    assert at.text_input(key="text").value == "first line second [MASK] line third"
    assert at.query_params["text"] == "first line second [MASK] line third"
    assert {m.label: m.value for m in at.metric}["Words (split at spaces)"] == "6"


def test_second_sentence_from_the_link(open_page):
    at = open_page(PAGE, text="I went to the store.", b="At the store, I bought fresh strawberries.")
    assert at.text_input(key="b").value == "At the store, I bought fresh strawberries."
    table = frame(at, "token_type_ids")
    assert set(table.loc[table["sentence"] == "B", "token_type_ids"]) == {1}
    assert table["token"].tolist().count("[SEP]") == 2
    assert any(c.value.endswith("[SEP] at the store, i bought fresh strawberries. [SEP]") for c in at.text)


def test_vocabulary_and_lookup(open_page):
    at = open_page(PAGE, tokenizer_tab="Vocabulary", text="hello", word="field")
    special = frame(at, "role")
    assert dict(zip(special["token"], special["id"])) == {
        "[CLS]": 101,
        "[SEP]": 102,
        "[PAD]": 0,
        "[UNK]": 100,
        "[MASK]": 103,
    }
    assert "[unused0]" in shown(at) and "[unused993]" in shown(at)
    first_ten, last_ten = (", ".join(f"`[unused{i}]`" for i in numbers) for numbers in (range(10), range(984, 994)))
    assert f"The first ten: {first_ten}." in shown(at) and f"The last ten: {last_ten}." in shown(at)  # seed 003
    assert "id 2492" in " ".join(s.value for s in at.success)
    assert "uncased" in shown(at)


@pytest.mark.parametrize("word", ["ß", "ılık"])
def test_case_variants_that_differ_on_an_uncased_model_are_said_to(open_page, bundled, word):
    """The page said "every variant below gets the same ids" beside ß → 1096 and SS → 7020 (an audit): in
    capitals ß is SS and the dotless ı is I, other letters that lowercasing does not give back."""
    at = open_page(PAGE, tokenizer_tab="Vocabulary", text="hello", word=word)
    variants = frame(at, "as typed")
    reference = [
        " ".join(map(str, bundled.tokenizer(v, add_special_tokens=False)["input_ids"])) for v in variants["as typed"]
    ]
    assert list(variants["ids"]) == reference and len(set(reference)) > 1
    assert "same ids" not in shown(at) and "yet these variants get different ids" in shown(at)


def test_default_lookup_is_sinan(open_page):
    at = open_page(PAGE, tokenizer_tab="Vocabulary", text="hello")
    assert "WordPiece spells it as 2 pieces: sin + \\#\\#an" in " ".join(i.value for i in at.info)
    assert set(frame(at, "as typed")["ids"]) == {"8254 2319"}


@pytest.mark.parametrize(
    ("word", "message"),
    [
        ("##s", "is in the vocabulary as \\#\\#s (id 2015), a continuation piece"),
        ("[MASK]", "is in the vocabulary as \\[MASK\\] (id 103), a special token."),
        ("field", "is in the vocabulary as field (id 2492)."),
    ],
)
def test_lookup_reports_the_entry_and_its_id(open_page, word, message):
    at = open_page(PAGE, tokenizer_tab="Vocabulary", text="hello", word=word)
    assert message in " ".join(s.value for s in at.success)
    assert not at.info or "not in the vocabulary" not in " ".join(i.value for i in at.info)


def test_lookup_of_a_piece_says_what_typing_it_gives(open_page):
    at = open_page(PAGE, tokenizer_tab="Vocabulary", text="hello", word="##s")
    assert "Typed in a text it becomes 3 pieces: \\# + \\# + s." in " ".join(s.value for s in at.success)


def test_one_piece_is_singular(open_page):
    at = open_page(PAGE, tokenizer_tab="Vocabulary", text="hello", word="🤖")
    assert "spells it as 1 piece: \\[UNK\\]." in " ".join(i.value for i in at.info)
    # an emoji first in an alert became its icon, hidden from screen readers: "is not in the vocabulary…"
    assert [i.value for i in at.info if "vocabulary" in i.value][0].startswith("“🤖”")


def test_a_linked_word_longer_than_the_box_says_so(open_page):
    """The lookup read the first 200 characters and said nothing ("100 pieces" for 150 words)."""
    at = open_page(PAGE, tokenizer_tab="Vocabulary", text="hello", word="a " * 150)
    assert at.text_input(key="word").value == ("a " * 150)[:200]
    assert "The link's `word` has 300 characters; this box takes 200: the first 200 are used." in [
        i.value for i in at.info
    ]
    assert "into 100 parts" in " ".join(i.value for i in at.info)  # the 100 words of the box, as shown


def test_several_words_are_said_to_be_words_not_pieces_of_one(open_page):
    """QA: "Sinan loves is not in the vocabulary; WordPiece spells it as 3 pieces: sin + ##an + loves"."""
    at = open_page(PAGE, tokenizer_tab="Vocabulary", text="hello", word="Sinan loves")
    said = " ".join(i.value for i in at.info)
    expected = (
        "the tokenizer first splits it at spaces and punctuation into 2 parts (Sinan, loves), then WordPiece spells"
    )
    assert f"{expected} them as 3 pieces: sin + \\#\\#an + loves." in said, said


def test_mask_demo_keeps_truncation_off(open_page):
    """With "Truncate to N" off, the demo runs the uncut sentences, as the lab draws them."""
    lines = "hello world and a few more words here\nhello"
    at = open_page(
        PAGE, tokenizer_tab="Padding lab", text="hello", lines=lines, pad_len="4", trunc="false", mask_demo="true"
    )
    effect = frame(at, "[CLS] L2 distance")
    assert effect["real tokens"].tolist() == [10, 3]  # not cut to 4
    assert effect["padding tokens"].tolist() == [0, 7]
    at = open_page(
        PAGE, tokenizer_tab="Padding lab", text="hello", lines=lines, pad_len="4", trunc="true", mask_demo="true"
    )
    assert frame(at, "[CLS] L2 distance")["real tokens"].tolist() == [4, 3]


def test_padding_lab_defaults_to_seed_003(open_page):
    at = open_page(PAGE, tokenizer_tab="Padding lab", text="hello", mask_demo="true")
    comparison = frame(at, "padding %").set_index("strategy")
    assert comparison.loc["longest", "padding %"] == 48.75
    assert comparison.loc["max_length=64", "padding %"] == 83.98
    (markup,) = [e.value for e in at.get("html") if 'aria-label="padding strategies"' in e.value]
    assert ">48.75</td>" in markup and "48.7500" not in markup  # a share rounded to 2 decimals, shown so
    distances = frame(at, "[CLS] L2 distance")
    assert distances["[CLS] L2 distance"].iloc[3] == 0.0  # the longest sentence has no padding
    assert (distances["[CLS] L2 distance"].iloc[:3] > 0.1).all()


def test_one_padded_sentence_position_by_position_as_seed_003_prints_it(open_page):
    """Seed 003 prints one padded sentence's token, id and mask; the lab showed ids only (the tokens on hover)."""
    lines = "hello world\nhello"
    at = open_page(PAGE, tokenizer_tab="Padding lab", text="hello", lines=lines, pad="max_length", pad_len="6")
    at.selectbox(key="pad_sentence").select(1).run()
    reference = AutoTokenizer.from_pretrained(bundled_model_path())(
        lines.split("\n"), padding="max_length", max_length=6, truncation=True
    )
    one = frame(at, "attention_mask")
    assert one.columns.tolist() == ["position", "token", "input_id", "attention_mask"]
    assert one["input_id"].tolist() == reference["input_ids"][1] and one["position"].tolist() == list(range(6))
    assert one["attention_mask"].tolist() == reference["attention_mask"][1] == [1, 1, 1, 0, 0, 0]
    assert one["token"].tolist() == ["[CLS]", "hello", "[SEP]", "[PAD]", "[PAD]", "[PAD]"]


def test_padding_lab_from_the_link(open_page):
    at = open_page(
        PAGE,
        tokenizer_tab="Padding lab",
        text="hello",
        lines="hello world\nhello",
        pad="max_length",
        pad_len="6",
        trunc="true",
        mask_demo="true",
    )
    assert at.radio(key="pad").value == "max_length" and at.slider(key="pad_len").value == 6
    comparison = frame(at, "padding %").set_index("strategy")
    assert comparison.loc["max_length=6", "shape"] == "2 × 6"
    assert comparison.loc["max_length=6", "padding %"] == round(100 * 5 / 12, 2)
    assert comparison.loc["longest", "padding %"] == 12.5
    distances = frame(at, "[CLS] L2 distance")["[CLS] L2 distance"].tolist()
    assert distances[0] > 0.1 and distances[1] > 0.1  # both padded to 6 positions: both change
    assert len(drawn_charts(at)) == 4  # padding shares, id and mask heatmaps, mask distances
    figures = {c.id.rsplit("-", 1)[-1]: json.loads(c.spec) for c in drawn_charts(at)}
    (bars,) = figures["mask_bars"]["data"]
    assert bars["x"] == ["0: hello world", "1: hello"]  # each bar named by its sentence, as in the table
    for key in ("ids_heatmap", "mask_heatmap"):  # 6 positions, each numbered: no 0.5 steps, no crowded scale
        (cells,) = figures[key]["data"]
        assert figures[key]["layout"]["xaxis"]["dtick"] == 1 and cells["showscale"] is False


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"text": ""}, "empty"),
        ({"text": "   \n  "}, "empty"),
        ({"text": "word " * 700}, "702 tokens long"),
        ({"text": "I love 🤖🤖"}, "became [UNK]"),
        ({"text": "hello", "pad": "sideways"}, "`pad` parameter"),
        ({"text": "hello", "pad_len": "abc"}, "`pad_len` parameter"),
        ({"text": "hello", "lines": "  \n "}, "at least one sentence"),
        ({"text": "hello", "word": " "}, "Type a word"),
        ({"text": "hello", "pad": "none"}, "cannot be stacked"),
        ({"text": "hello", "pad": "none", "mask_demo": "true"}, "pads to the longest sentence"),
        ({"text": "hello", "mask_demo": "maybe"}, "`mask_demo` parameter"),
        ({"text": "hello", "trunc": "2"}, "`trunc` parameter"),
        ({"text": "hello", "tokenizer_tab": "Vocab"}, "`tokenizer_tab` parameter"),
    ],
)
def test_bad_input_gets_a_message(open_page, params, message):
    tab = "Tokens" if "text" in params and len(params) == 1 else "Vocabulary" if "word" in params else "Padding lab"
    at = open_page(PAGE, **{"tokenizer_tab": tab, **params})
    assert not at.exception, at.exception
    assert message in shown(at)


def test_mask_comparison_runs_on_request(open_page):
    at = open_page(PAGE, tokenizer_tab="Padding lab", text="hello")
    assert at.toggle(key="mask_demo").value is False
    assert not any("[CLS] L2 distance" in d.columns for d in tables(at))
    at.toggle(key="mask_demo").set_value(True).run()
    assert frame(at, "[CLS] L2 distance")["[CLS] L2 distance"].iloc[3] == 0.0


def test_html_and_markdown_are_shown_literally(open_page):
    text = "<b>bold</b> **strong** [link](http://example.com) `code`"
    at = open_page(PAGE, text=text)
    assert not at.exception
    assert at.text_input(key="text").value == text
    words = frame(at, "token_type_ids")["word"].tolist()
    assert "<" in words and "**" not in words and "*" in words
    for element in at.markdown:
        assert "<b>" not in element.value and "](http" not in element.value


@pytest.fixture(scope="module")
def cased_model_dir(tmp_path_factory):
    """A tiny random BERT whose tokenizer keeps capitals (the bert-base-uncased vocabulary, not lowercased)."""
    folder = save_random_bert(tmp_path_factory.mktemp("tiny-cased"), random_bert_config(**TINY_CONFIG))
    AutoTokenizer.from_pretrained(bundled_model_path(), do_lower_case=False).save_pretrained(folder)
    return folder


def before_wordpiece(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Before WordPiece"))


def test_what_the_tokenizer_does_before_wordpiece_is_said_with_the_texts_own_words(open_page, bundled):
    """Chinese text showed "Words 1 … WordPiece cut no word into pieces" for 11 tokens, and Korean syllables coming
    apart were blamed on WordPiece: the caption said nothing of lowercasing, accents or Chinese characters. Then it
    named every script for every text (seven lines of a projector for an English sentence): now a script is named
    when the text is written in it, with the text's own word as the tokenizer reads it."""
    at = open_page(PAGE, text="我喜欢学习")
    tokens = bundled.tokenizer.tokenize("我喜欢学习")
    assert frame(at, "token_type_ids")["token"].tolist()[1:-1] == tokens and len(tokens) == 5  # a word per character
    said = before_wordpiece(at)
    assert said.startswith("Before WordPiece, the tokenizer lowercases the text and strips its accents")
    assert "around every Chinese character (each one a word of its own)" in said and "(é → e)" in said
    english = before_wordpiece(open_page(PAGE, text="The animal didn't cross the street"))
    assert "Chinese" not in english and "Korean" not in english and "(é → e)" in english
    hindi = before_wordpiece(open_page(PAGE, text="मैं स्कूल"))
    assert '("\u2068मैं\u2069" → "\u2068म\u2069")' in hindi and bundled.tokenizer.tokenize("मैं") == ["म"]
    korean = before_wordpiece(open_page(PAGE, text="학교 한국어"))
    assert "a Korean syllable comes apart into its letters (학 → \u1112 \u1161 \u11a8)" in korean
    assert (
        before_wordpiece(open_page(PAGE, text="*Café* <b>")).count(
            '"\u2068\\*Café\\*\u2069" → "\u2068\\*cafe\\*\u2069"'
        )
        == 1
    )


def test_the_cut_words_count_says_which_words_it_counts(open_page, bundled):
    """Words (split at spaces) counted "30,522" once, and the cut words listed its 522: the count's help says
    that WordPiece's words are split at punctuation too, with this very example, true of the tokenizer."""
    at = open_page(PAGE, text="WordPiece has 30,522 tokens.")
    (cut,) = [m for m in at.metric if m.label == "Words cut into ## pieces"]
    assert '"30,522" is the words 30 , 522 here, and only 522 is cut (52 ##2)' in cut.help
    assert bundled.tokenizer.tokenize("30,522") == ["30", ",", "52", "##2"]
    assert "\u2068522\u2069 → \u206852 \\#\\#2\u2069" in shown(at) and "30,522" not in shown(at)


@pytest.mark.parametrize("word", ["[MASK]", "[mask]", "[Mask]"])
def test_looking_up_a_special_token_says_why_its_variants_differ(open_page, bundled, word):
    """Looking up [MASK] said its variants differed because "changing this word's case changed its letters (ß in
    capitals is SS…)": a special token is found as written, before lowercasing; [mask] is ordinary text. [mask]
    typed in lower case has the special token among its variants (in capitals) all the same."""
    at = open_page(PAGE, tokenizer_tab="Vocabulary", word=word)
    assert not at.exception
    said = shown(at)
    assert "\\[MASK\\] is the special token, \\[mask\\] is ordinary text (split at its brackets)" in said
    assert "ß" not in said
    variants = frame(at, "as typed").set_index("as typed")["pieces"]
    assert variants["[mask]"] == " ".join(bundled.tokenizer.tokenize("[mask]")) == "[ mask ]"
    assert variants["[MASK]"] == "[MASK]"


def test_cased_model_shows_case_matters(open_page, cased_model_dir):
    at = open_page(PAGE, cased_model_dir, text="Hello hello", word="Hello")
    assert frame(at, "token_type_ids")["token"].tolist() == ["[CLS]", "[UNK]", "hello", "[SEP]"]
    assert before_wordpiece(at).startswith(
        "Before WordPiece, the tokenizer splits the text at spaces"
    )  # no lowercasing
    at = open_page(PAGE, cased_model_dir, tokenizer_tab="Vocabulary", text="Hello hello", word="Hello")
    assert not at.exception
    assert "This model is cased" in shown(at)
    variants = frame(at, "as typed").set_index("as typed")["pieces"]
    assert variants["Hello"] == "[UNK]" and variants["hello"] == "hello"


def test_only_the_open_tab_is_drawn(open_page):
    """Tabs are lazy and in the link: the Tokens tab draws no padding-lab chart, the Padding lab no token table."""
    at = open_page(PAGE, text="hello")
    assert any("token_type_ids" in d.columns for d in tables(at))
    assert not drawn_charts(at) and not any("padding %" in d.columns for d in tables(at))
    at = open_page(PAGE, tokenizer_tab="Padding lab", text="hello")
    assert drawn_charts(at) and not any("token_type_ids" in d.columns for d in tables(at))


def test_repeated_unknown_and_cut_words_are_listed_once(open_page):
    at = open_page(PAGE, text="unaffable " * 100 + "😀 " * 100)
    assert not at.exception
    unknown = " ".join(w.value for w in at.warning if "[UNK]" in w.value)
    assert unknown.count("😀") == 1
    cuts = " ".join(m.value for m in at.markdown if "into pieces" in m.value)
    assert cuts.count("unaffable") == 1


def test_a_very_long_unknown_word_is_quoted_short(open_page):
    """A 20,000-character word that became [UNK] was quoted whole in the warning (screens of x), beside a line saying
    every word is a vocabulary entry."""
    at = open_page(PAGE, text="x" * 25_000)
    unknown = next(w.value for w in at.warning if "[UNK]" in w.value)
    assert "x" * 39 + "…" in unknown and len(unknown) < 300
    assert "WordPiece does not try a word longer than 100 characters" in unknown  # not a spelling problem
    assert "longer than" not in next(w.value for w in open_page(PAGE, text="I love 🤖").warning if "[UNK]" in w.value)
    assert "every word it could spell is one vocabulary entry" in shown(at)
    assert "every word is a single vocabulary entry" not in shown(at)
    assert "[UNK] is a special token too, so what became [UNK] is gone" in shown(at)  # the round trip's last line
    assert "cannot spell" not in unknown  # it can: 100 x's are 50 pieces


def test_unknown_words_are_told_each_their_own_reason(open_page):
    """A 300-letter word was said to be one "the vocabulary cannot spell" (it can: the 100-character limit is why),
    and Thai's one [UNK] for a whole sentence was not explained (an audit of international input)."""
    at = open_page(PAGE, text="a" * 300 + " and 🤖 and สวัสดีครับ")
    (unknown,) = [w.value for w in at.warning if "[UNK]" in w.value]
    assert unknown.startswith(
        "3 tokens became [UNK]: WordPiece does not try a word longer than 100 characters, such as a"
    )
    assert (
        "; 🤖, ด, ค, บ are not in the vocabulary, and one character it lacks makes the whole word [UNK]: 🤖, สวัสดีครับ ("
        in unknown
    )
    assert "such as Thai, is one long word" in unknown


def test_the_padding_lab_names_the_sentence_that_is_too_long(open_page):
    """Padded to a 602-token row, "short" was named as too long beside the sentence that is."""
    lines = "word " * 600 + "\nshort"
    at = open_page(PAGE, tokenizer_tab="Padding lab", lines=lines, pad="longest", trunc="false")
    assert not at.exception
    said = shown(at)
    assert "Sentence 0 (“word word word word wor…”) is longer than the model's 512 positions" in said
    assert "Sentences 0, 1" not in said


def test_the_padding_lab_says_which_sentences_truncation_cut(open_page):
    # Each named by its chart row and its start: under the text box (lines not numbered, a blank one skipped) the
    # class read "Sentence 3" as the box's third line (QA).
    at = open_page(PAGE, tokenizer_tab="Padding lab", lines="a b c d e f\n\nshort", pad="max_length", pad_len="2")
    said = "Sentences 0, 1 (“a b c d e f”, “short”) were cut to N = 2: only [CLS] and [SEP] are left, no word."
    assert said in shown(at)
    at = open_page(PAGE, tokenizer_tab="Padding lab", lines="a b c d e f\nshort", pad="max_length", pad_len="5")
    assert "Sentence 0 (“a b c d e f”) was cut to N = 5: it keeps 5 tokens, [CLS] and [SEP] included." in shown(at)
    bars = next(json.loads(c.spec) for c in drawn_charts(at) if "Share of padding" in c.spec)
    assert bars["layout"]["yaxis"]["rangemode"] == "nonnegative"  # no padding: from 0, not from −1 %


@pytest.fixture(scope="module")
def bundled_tokenizer():
    """The bundled encoder's tokenizer, called directly: the reference for what the page shows."""
    return AutoTokenizer.from_pretrained(bundled_model_path())


def chart(at, title: str) -> dict:
    """The plotly figure (as sent to the browser) whose title starts with ``title``."""
    figures = [json.loads(c.spec) for c in drawn_charts(at)]
    (found,) = [f for f in figures if f["layout"].get("title", {}).get("text", "").startswith(title)]
    return found


def test_the_vocabulary_metrics_are_the_tokenizers_own(open_page, bundled_tokenizer):
    """The "Vocabulary size" and "Special tokens" metrics are what the tokenizer itself says, not a count of
    some of its entries."""
    at = open_page(PAGE, tokenizer_tab="Vocabulary", text="hello")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Vocabulary size"] == f"{len(bundled_tokenizer):,}" == "30,522"
    assert metrics["Special tokens"] == str(len(bundled_tokenizer.all_special_tokens)) == "5"
    unused = sum(1 for t in bundled_tokenizer.get_vocab() if t.startswith("[unused"))
    assert metrics["[unused…] tokens"] == str(unused)


def test_the_padding_lab_draws_and_offers_the_tokenizers_own_batch(open_page, csv_downloads, bundled_tokenizer):
    """The "Token ids" heatmap showed the mask's 0/1, or the padded-batch CSV held another strategy's batch: both
    must be the ids ``tokenizer(lines, padding="max_length", max_length=N)`` gives."""
    lines, n = ["hello world and more", "hello"], 9
    at = open_page(
        PAGE, tokenizer_tab="Padding lab", text="hello", lines="\n".join(lines), pad="max_length", pad_len=str(n)
    )
    assert not at.exception, at.exception
    expected = bundled_tokenizer(lines, padding="max_length", truncation=True, max_length=n)
    ids = np.array(expected["input_ids"])
    assert ids.shape == (2, n) and (np.array(expected["attention_mask"]) == 0).any()  # there is padding to show
    drawn = chart(at, "Token ids")["data"][0]["z"]
    np.testing.assert_array_equal(typed(drawn) if isinstance(drawn, dict) else np.array(drawn), ids)
    mask = chart(at, "Attention mask")["data"][0]["z"]
    np.testing.assert_array_equal(
        typed(mask) if isinstance(mask, dict) else np.array(mask), np.array(expected["attention_mask"])
    )
    batch = csv_downloads["padded-batch-max_length"]
    assert len(batch) == len(lines) * n
    assert batch["input_id"].tolist() == ids.ravel().tolist()
    assert batch["attention_mask"].tolist() == np.ravel(expected["attention_mask"]).tolist()
    assert batch["token"].tolist() == [t for row in ids for t in bundled_tokenizer.convert_ids_to_tokens(row.tolist())]


def test_the_padding_bars_are_the_share_of_pad_in_percent(open_page, bundled_tokenizer):
    """Each bar is the share of [PAD] among the batch's positions, in percent, as the tokenizer pads: a bar 100×
    too small looked like no padding at all."""
    lines, n = ["hello world", "hello"], 6
    at = open_page(PAGE, tokenizer_tab="Padding lab", text="hello", lines="\n".join(lines), pad_len=str(n))
    bars = chart(at, "Share of padding")["data"][0]
    expected = {}
    for strategy, padding in (("longest", "longest"), (f"max_length={n}", "max_length"), ("none", False)):
        masks = bundled_tokenizer(lines, padding=padding, truncation=True, max_length=n)["attention_mask"]
        expected[strategy] = 100 * sum(row.count(0) for row in masks) / sum(len(row) for row in masks)
    assert expected["longest"] == 12.5 and expected[f"max_length={n}"] > 40  # the lines do pad
    heights = typed(bars["y"]) if isinstance(bars["y"], dict) else bars["y"]
    assert dict(zip(bars["x"], heights)) == pytest.approx(expected, abs=0.005)


def test_right_to_left_words_keep_their_place_in_the_list_of_cut_words(open_page):
    """QA: in "I said שלום עולם to them" the list of cut words came out reversed, pieces before their arrow."""
    at = open_page(PAGE, text="I said שלום עולם to them")
    [line] = [m.value for m in at.markdown if "into pieces:**" in m.value]
    assert "\u2068שלום\u2069 → \u2068" in line and "\u2068עולם\u2069 → \u2068" in line, line


def test_special_tokens_typed_in_the_text_are_said_to_be_the_tokens_themselves(open_page, bundled):
    """Typed [CLS], [SEP] and [PAD] became the real tokens (ids 101, 102, 0; a [PAD] read with mask 1) with nothing
    said: the *special* column's False was the only hint (an audit)."""
    text = "[CLS] hello [SEP] world [PAD]"
    at = open_page(PAGE, text=text)
    table = frame(at, "token_type_ids")
    typed = table[table["token"].isin(["[CLS]", "[SEP]", "[PAD]"]) & ~table["special"]]
    assert list(typed["id"]) == bundled.tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]", "[PAD]"])
    assert list(typed["attention_mask"]) == [1, 1, 1]
    (said,) = [i.value for i in at.info if i.value.startswith("You typed")]
    assert said.startswith("You typed \\[CLS\\], \\[SEP\\], \\[PAD\\]: the tokenizer reads each as the special token")
    assert said.endswith("a typed [PAD] is read like a word (attention mask 1).")
    assert not [i for i in open_page(PAGE, text="hello world").info if i.value.startswith("You typed")]


def test_a_typed_unk_is_the_special_token_not_a_word_the_vocabulary_cannot_spell(open_page):
    """QA: "[CLS] [SEP] [PAD] [UNK] [MASK]" typed gave "1 token became [UNK]: the vocabulary cannot spell  (…)"."""
    at = open_page(PAGE, text="[CLS] [SEP] [PAD] [UNK] [MASK]")
    assert not [w for w in at.warning if "became [UNK]" in w.value]
    at = open_page(PAGE, text="I love 🤖 and [UNK]")
    assert "1 token became [UNK]: 🤖 is not in the vocabulary" in " ".join(w.value for w in at.warning)


def test_a_character_the_vocabulary_lacks_is_not_said_to_be_a_typed_unk(open_page):
    """QA: "I love pizza 🍕" said "You typed [UNK]: the tokenizer reads it as the special token itself" — the emoji
    became [UNK] because the vocabulary lacks it; nobody typed "[UNK]"."""
    at = open_page(PAGE, text="I love pizza 🍕")
    assert not [i.value for i in at.info if i.value.startswith("You typed")]
    (unknown,) = [w.value for w in at.warning if "[UNK]" in w.value]
    assert unknown.startswith("1 token became [UNK]: 🍕 is not in the vocabulary (emoji,")
    at = open_page(PAGE, text="I love pizza🍕 and [UNK]")  # both: each said as what it is
    (typed,) = [i.value for i in at.info if i.value.startswith("You typed")]
    assert typed.startswith("You typed \\[UNK\\]: the tokenizer reads it as the special token itself")
    (unknown,) = [w.value for w in at.warning if "[UNK]" in w.value]
    assert unknown.startswith(
        "1 token became [UNK]: 🍕 is not in the vocabulary, and one character it lacks makes the whole word [UNK]: "
        "pizza🍕 (emoji,"
    )
