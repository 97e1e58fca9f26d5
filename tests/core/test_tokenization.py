import numpy as np
import pytest
import torch
from transformers import AutoTokenizer

from bertlens.analysis import encode
from bertlens.models import bundled_model_path, is_cased
from bertlens.tokenization import (
    SEED_BATCH,
    BeforeWordPiece,
    batch_lines,
    before_wordpiece,
    case_variants,
    lacking_characters,
    look_up,
    mask_effect,
    pad_batch,
    padded_batches,
    padding_comparison,
    round_trip,
    spaced_words,
    split_words,
    token_counts,
    token_table,
    typed_special_tokens,
    vocabulary_facts,
)
from bertlens.wording import listed

SEED_SENTENCE = "Sinan loves a beautiful day"


def table_for(tokenizer, text, text_b=None):
    return token_table(encode(tokenizer, text, text_b), text, text_b)


def test_seed_token_table(bundled):
    table = table_for(bundled.tokenizer, SEED_SENTENCE)
    assert table["id"].tolist() == [101, 8254, 2319, 7459, 1037, 3376, 2154, 102]
    assert table["token"].tolist()[1:3] == ["sin", "##an"]
    assert table["word"].tolist() == ["", "Sinan", "Sinan", "loves", "a", "beautiful", "day", ""]
    assert table["word index"].tolist()[1:7] == [0, 0, 1, 2, 3, 4]
    assert table["continuation (##)"].tolist() == [False, False, True, False, False, False, False, False]
    assert table["split word"].tolist() == [False, True, True, False, False, False, False, False]
    assert table["special"].tolist() == [True] + [False] * 6 + [True]
    assert set(table["token_type_ids"]) == {0} and set(table["attention_mask"]) == {1}
    counts = token_counts(
        table, bundled.tokenizer.unk_token, spaced_words(encode(bundled.tokenizer, SEED_SENTENCE), SEED_SENTENCE)
    )
    assert (counts.words, counts.tokens, counts.special, counts.split_words, counts.unknown) == (5, 8, 2, 1, 0)
    assert counts.tokens_per_word == pytest.approx(6 / 5)


def test_a_words_column_keeps_the_marks_its_tokenizer_strips(bundled):
    """The word column cut a word at an accent or vowel sign the uncased tokenizer strips ("cafe" for café typed
    with a combining accent, म for मैं): it shows the word as typed."""
    text = "मैं स्कूल and cafe\u0301 here"
    table = table_for(bundled.tokenizer, text)
    words = dict(zip(table["token"], table["word"]))
    assert words == {"[CLS]": "", "म": "मैं", "स": "स्कूल", "##क": "स्कूल", "##ल": "स्कूल", "and": "and",
                     "cafe": "cafe\u0301", "here": "here", "[SEP]": ""}  # fmt: skip


@pytest.mark.parametrize(
    "text, said",
    [
        ("The animal didn't cross the street", BeforeWordPiece(stripped=None, syllable=None, chinese=False)),
        ("Un CAFÉ à Paris", BeforeWordPiece(stripped=("CAFÉ", "cafe"), syllable=None, chinese=False)),
        ("मैं स्कूल", BeforeWordPiece(stripped=("मैं", "म"), syllable=None, chinese=False)),  # ै ं: Mn, class 0
        ("कि", BeforeWordPiece(stripped=None, syllable=None, chinese=False)),  # ि is a spacing mark: kept
        ("でんわ", BeforeWordPiece(stripped=("でんわ", "てんわ"), syllable=None, chinese=False)),
        ("한국어", BeforeWordPiece(stripped=None, syllable=("한", "\u1112\u1161\u11ab"), chinese=False)),
        ("我喜欢 it", BeforeWordPiece(stripped=None, syllable=None, chinese=True)),
    ],
)
def test_before_wordpiece_names_what_happens_to_this_text(bundled, text, said):
    """Each example is the word as the uncased tokenizer itself reads it (hand-written here, not recomputed)."""
    assert before_wordpiece(bundled.tokenizer, text) == said


def test_a_cased_tokenizer_strips_nothing_before_wordpiece(cased_tokenizer):
    said = before_wordpiece(cased_tokenizer, "Un CAFÉ à Paris, 한국어, でんわ, 我")
    assert said == BeforeWordPiece(stripped=None, syllable=None, chinese=True)


def test_seed_003_exercise_1_split_words(bundled):
    sentence = "The pre-trained BERT model uses WordPiece tokenization with 30,522 tokens."
    table = table_for(bundled.tokenizer, sentence)
    assert table["token"].tolist() == [
        "[CLS]", "the", "pre", "-", "trained", "bert", "model", "uses", "word", "##piece", "token",
        "##ization", "with", "30", ",", "52", "##2", "token", "##s", ".", "[SEP]",
    ]  # fmt: skip
    split = split_words(table)
    assert split["word"].tolist() == ["WordPiece", "tokenization", "522", "tokens"]
    assert split["pieces"].tolist() == ["word ##piece", "token ##ization", "52 ##2", "token ##s"]
    assert split["count"].tolist() == [2, 2, 2, 2]


def test_pair_segments_and_words(bundled):
    table = table_for(bundled.tokenizer, "I went to the store.", "At the store, I bought fresh strawberries.")
    b_rows = table[table["sentence"] == "B"]
    assert set(b_rows["token_type_ids"]) == {1}
    assert set(table[table["sentence"] == "A"]["token_type_ids"]) == {0}
    assert split_words(table).set_index("word").loc["strawberries", "pieces"] == "straw ##berries"
    assert table["token"].tolist().count("[SEP]") == 2


def test_round_trip_shows_the_added_special_tokens(bundled):
    enc = encode(bundled.tokenizer, "A simple sentence!")  # seed 004
    assert enc.input_ids == (101, 1037, 3722, 6251, 999, 102)
    assert round_trip(bundled.tokenizer, enc) == ("[CLS] a simple sentence! [SEP]", "a simple sentence!")
    pair = encode(bundled.tokenizer, "a b", "c")
    assert round_trip(bundled.tokenizer, pair)[0] == "[CLS] a b [SEP] c [SEP]"


def test_unknown_characters_are_counted(bundled):
    table = table_for(bundled.tokenizer, "I love 🤖 <b>html</b>")
    assert token_counts(table, "[UNK]", 4).unknown == 1
    assert table.loc[table["token"] == "[UNK]", "word"].tolist() == ["🤖"]


@pytest.mark.parametrize(
    ("text", "text_b", "words"),
    [
        ("It didn't rain, did it?", None, 5),  # the pre-tokenizer makes 9 words of it: didn ' t , ?
        ("The pre-trained BERT uses 30,522 tokens.", None, 6),
        ("  spaced   out\ttext \n", None, 3),
        ("I went home.", "It was late!", 6),
        ("", None, 0),
    ],
)
def test_words_are_counted_between_spaces(bundled, text, text_b, words):
    encoding = encode(bundled.tokenizer, text, text_b)
    assert spaced_words(encoding, text, text_b) == words == len(text.split()) + len((text_b or "").split())


def test_words_of_a_truncated_input_are_those_read(bundled):
    text = "one two three four five six"
    assert spaced_words(encode(bundled.tokenizer, text, max_length=5), text) == 3  # [CLS] one two three [SEP]


def test_vocabulary_facts_match_seed_003(bundled):
    facts = vocabulary_facts(bundled.tokenizer)
    assert facts.size == 30522 and not facts.cased
    assert dict(zip(facts.special["token"], facts.special["id"])) == {
        "[CLS]": 101, "[SEP]": 102, "[PAD]": 0, "[UNK]": 100, "[MASK]": 103,
    }  # fmt: skip
    assert len(facts.unused) == 994  # seed 003's first and last ten, in number order (not the vocabulary's)
    assert facts.unused[:10] == tuple(f"[unused{i}]" for i in range(10))
    assert facts.unused[-10:] == tuple(f"[unused{i}]" for i in range(984, 994))
    assert facts.kinds["entries"].sum() == 30522
    assert facts.kinds.set_index("kind of entry")["entries"].filter(like="unused").item() == 994


def test_word_lookup(bundled):
    sinan = look_up(bundled.tokenizer, "Sinan")  # seed 004: 'sinan' in tokenizer.vocab is False
    assert (sinan.normalized, sinan.in_vocab, sinan.pieces, sinan.ids) == (
        "sinan",
        False,
        ("sin", "##an"),
        (8254, 2319),
    )
    assert sinan.parts == ("Sinan",)
    # Several words are parts split at spaces and punctuation, as the pieces are (review: a special token stayed one)
    assert look_up(bundled.tokenizer, "Sinan loves").parts == ("Sinan", "loves")
    assert look_up(bundled.tokenizer, "[CLS] hello!").parts == ("[CLS]", "hello", "!")
    assert look_up(bundled.tokenizer, "मैं स्कूल").parts == ("मैं", "स्कूल")  # not म: the signs the tokenizer strips kept
    field = look_up(bundled.tokenizer, "field")  # seed 000: tokenizer.vocab["field"]
    assert field.in_vocab and field.ids == (2492,) and (field.entry_id, field.kind) == (2492, "word")
    assert field.typed_gives_entry


def test_lookup_of_continuation_pieces_and_special_tokens(bundled):
    vocab = bundled.tokenizer.get_vocab()
    piece = look_up(bundled.tokenizer, "##s")  # the entry, not the '#' that typing it gives first
    assert (piece.entry, piece.entry_id, piece.kind) == ("##s", vocab["##s"], "continuation") and vocab["##s"] == 2015
    assert piece.pieces == ("#", "#", "s") and not piece.typed_gives_entry
    mask = look_up(bundled.tokenizer, "[MASK]")  # special tokens are not lowercased by an uncased tokenizer
    assert (mask.in_vocab, mask.entry, mask.entry_id, mask.kind) == (True, "[MASK]", 103, "special")
    assert mask.pieces == ("[MASK]",) and mask.typed_gives_entry
    unused = look_up(bundled.tokenizer, "[unused5]")
    assert (unused.entry_id, unused.kind, unused.typed_gives_entry) == (6, "reserved", False)
    assert not look_up(bundled.tokenizer, "[mask]").in_vocab  # lowercase is not the special token
    assert not look_up(bundled.tokenizer, "##").in_vocab


@pytest.fixture(scope="module")
def cased_tokenizer():
    return AutoTokenizer.from_pretrained(bundled_model_path(), do_lower_case=False)


def test_case_variants_uncased_vs_cased(bundled, cased_tokenizer):
    uncased = case_variants(bundled.tokenizer, "Hello")
    assert uncased["as typed"].tolist() == ["Hello", "hello", "HELLO"]
    assert set(uncased["ids"]) == {"7592"}
    assert is_cased(cased_tokenizer) and not is_cased(bundled.tokenizer)
    cased = case_variants(cased_tokenizer, "Hello").set_index("as typed")["pieces"]
    assert cased["hello"] == "hello" and cased["Hello"] == "[UNK]"


def test_seed_003_padding_percentages(bundled):
    comparison = padding_comparison(padded_batches(bundled.tokenizer, SEED_BATCH, 64, truncation=True), 64)
    comparison = comparison.set_index("strategy")
    assert comparison.loc["longest", "shape"] == "4 × 20"
    assert comparison.loc["longest", "padding %"] == 48.75
    assert comparison.loc["max_length=64", "shape"] == "4 × 64"
    assert comparison.loc["max_length=64", "padding %"] == 83.98
    assert comparison.loc["none", "padding tokens"] == 0 and comparison.loc["none", "positions"] == 4 + 12 + 5 + 20


def test_padded_matrices(bundled):
    batch = pad_batch(bundled.tokenizer, SEED_BATCH, "longest", 64, truncation=True)
    ids, mask = batch.matrix("input_ids"), batch.matrix("attention_mask")
    assert ids.shape == mask.shape == (4, 20)
    assert mask.sum(axis=1).tolist() == [4, 12, 5, 20]
    assert (ids[mask == 0] == 0).all() and batch.tokens[0][-1] == "[PAD]"
    rows = batch.table()
    assert len(rows) == 4 * 20 and rows[rows["attention_mask"] == 0]["token"].eq("[PAD]").all()
    assert rows.query("sentence == 1")["input_id"].tolist() == list(batch.input_ids[1])
    ragged = pad_batch(bundled.tokenizer, SEED_BATCH, "none", 64, truncation=True)
    assert not ragged.rectangular and np.isnan(ragged.matrix("input_ids")[0, 4])


def test_truncation(bundled):
    cut = pad_batch(bundled.tokenizer, SEED_BATCH, "max_length", 8, truncation=True)
    assert {len(row) for row in cut.input_ids} == {8} and cut.tokens[3][-1] == "[SEP]"
    assert cut.full_lengths == (4, 12, 5, 20)
    uncut = pad_batch(bundled.tokenizer, SEED_BATCH, "max_length", 8, truncation=False)
    assert [len(row) for row in uncut.input_ids] == [8, 12, 8, 20] and not uncut.rectangular


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("max_length", [2, 8, 64])
@pytest.mark.parametrize("truncation", [True, False])
def test_every_strategy_is_what_one_tokenizer_call_gives(bundled, max_length, truncation, side):
    """The lab tokenizes once and pads with ``tokenizer.pad``: each strategy's batch equals the direct call."""
    sentences = [*SEED_BATCH, "Émoji 🙂 and <b>HTML</b>", "a " * 70]
    tokenizer = (
        bundled.tokenizer
        if side == "right"
        else AutoTokenizer.from_pretrained(bundled_model_path(), padding_side="left")
    )
    for strategy, batch in padded_batches(tokenizer, sentences, max_length, truncation).items():
        padding = {"longest": "longest", "max_length": "max_length", "none": False}[strategy]
        direct = tokenizer(sentences, padding=padding, truncation=truncation, max_length=max_length)
        assert [list(row) for row in batch.input_ids] == direct["input_ids"], strategy
        assert [list(row) for row in batch.attention_mask] == direct["attention_mask"], strategy
        assert [list(row) for row in batch.tokens] == [tokenizer.convert_ids_to_tokens(r) for r in direct["input_ids"]]
        assert batch.full_lengths == tuple(len(r) for r in tokenizer(sentences)["input_ids"])
    assert padded_batches(tokenizer, [], 8, True)["longest"].input_ids == ()


def test_batch_lines():
    assert batch_lines("  one \n\n   \ntwo\n") == ["one", "two"]
    assert batch_lines("") == []
    assert batch_lines("one\n\u200b\u200b\n\u00ad\u200e \ntwo") == ["one", "two"]  # lines that show nothing


def cls_alone(bundle, sentence):
    with torch.no_grad():
        ids = torch.tensor([bundle.tokenizer(sentence)["input_ids"]])
        return bundle.model.bert(input_ids=ids).last_hidden_state[0, 0]


def test_attention_mask_matters_seed_003(bundled):
    batch = pad_batch(bundled.tokenizer, ["hello world", "hello"], "longest", 512, truncation=True)
    distances = mask_effect(bundled, batch)["[CLS] L2 distance"].tolist()
    assert distances[0] == 0.0 and distances[1] > 0.1


def test_mask_effect_against_unpadded_reference(bundled):
    batch = pad_batch(bundled.tokenizer, SEED_BATCH, "longest", 512, truncation=True)
    effect = mask_effect(bundled, batch)
    assert effect["padding tokens"].tolist() == [16, 8, 15, 0]
    distances = effect["[CLS] L2 distance"].to_numpy()
    assert distances[3] == 0.0 and (distances[:3] > 0.1).all()
    # With the mask, a padded sentence's [CLS] is what the sentence gives alone; without it, it drifts.
    ids = torch.tensor(batch.input_ids)
    with torch.no_grad():
        unmasked = bundled.model.bert(input_ids=ids).last_hidden_state[:, 0]
    for i, sentence in enumerate(SEED_BATCH):
        assert (unmasked[i] - cls_alone(bundled, sentence)).norm().item() == pytest.approx(
            distances[i], rel=1e-3, abs=1e-4
        )
    assert not bundled.model.training and not bundled.model.bert._forward_hooks


def test_mask_effect_needs_a_rectangle(bundled):
    with pytest.raises(ValueError):
        mask_effect(bundled, pad_batch(bundled.tokenizer, SEED_BATCH, "none", 64, truncation=True))


def test_messages_list_each_item_once_and_say_how_many_more():
    assert listed(["😀"] * 510) == "😀"
    assert listed(map(str, range(20)), limit=3) == "0, 1, 2 … and 17 more"
    assert listed(["a → b", "a → b", "c → d"], "; ") == "a → b; c → d"


# --- counts and flags against the tokenizer called directly (mutation audit 2) ---------------


def test_a_typed_hash_is_not_a_continuation_piece(bundled):
    """Only WordPiece's own "##…" pieces continue a word; "#" typed in the text is a token of its own."""
    text = "C# and ##s #1 Sinan"
    table = table_for(bundled.tokenizer, text)
    assert table["token"].tolist() == ["[CLS]", "c", "#", "and", "#", "#", "s", "#", "1", "sin", "##an", "[SEP]"]
    assert table["continuation (##)"].tolist() == [False] * 10 + [True, False]


def test_pair_counts_equal_the_tokenizers_special_tokens_mask(bundled):
    text, text_b = "Sinan left.", "Sinan stayed home."
    direct = bundled.tokenizer(text, text_b, return_special_tokens_mask=True)
    assert sum(direct["special_tokens_mask"]) == 3  # [CLS] A [SEP] B [SEP]
    encoding = encode(bundled.tokenizer, text, text_b)
    table = token_table(encoding, text, text_b)
    counts = token_counts(table, bundled.tokenizer.unk_token, spaced_words(encoding, text, text_b))
    assert table["special"].tolist() == [bool(m) for m in direct["special_tokens_mask"]]
    assert (counts.tokens, counts.special, counts.words) == (len(direct["input_ids"]), 3, 5)
    assert counts.tokens_per_word == pytest.approx((12 - 3) / 5)


def test_the_same_split_word_in_both_sentences_is_listed_twice(bundled):
    """Word indices restart in sentence B: "Sinan" is word 0 of both, and each is its own split word."""
    text, text_b = "Sinan left.", "Sinan stayed."
    split = split_words(table_for(bundled.tokenizer, text, text_b))
    assert split.to_dict("records") == [
        {"sentence": "A", "word": "Sinan", "pieces": "sin ##an", "count": 2},
        {"sentence": "B", "word": "Sinan", "pieces": "sin ##an", "count": 2},
    ]


def test_a_word_that_became_unk_is_not_a_typed_unk(bundled):
    """QA: "I love pizza 🍕" was said to have "[UNK]" typed in it: the emoji's row has the token [UNK] and is not one
    the tokenizer added, as a typed [UNK]'s is. A typed special token is the text of its row."""
    special = bundled.tokenizer.all_special_tokens
    assert typed_special_tokens(table_for(bundled.tokenizer, "I love pizza 🍕"), special) == []
    assert typed_special_tokens(table_for(bundled.tokenizer, "I love 🍕 and [UNK]"), special) == ["[UNK]"]
    assert typed_special_tokens(table_for(bundled.tokenizer, "[SEP] pizza🍕 [CLS]"), special) == ["[SEP]", "[CLS]"]


@pytest.mark.parametrize(
    ("words", "lacking"),
    [
        (["🍕"], ["🍕"]),
        (["pizza🍕", "🍕"], ["🍕"]),  # each once, and never the letters the vocabulary has
        (["naïve🙂"], ["🙂"]),  # ï is read as i (uncased: accents stripped)
        (["Ⅻ"], ["Ⅻ"]),  # named as typed, not as the tokenizer reads it (ⅻ)
        (["สวัสดีครับ"], ["ด", "ค", "บ"]),  # the vowel and tone marks are stripped before WordPiece
        (["x" * 300], []),  # too long for WordPiece, but every character is in the vocabulary
    ],
)
def test_the_characters_the_vocabulary_lacks_are_named(bundled, words, lacking):
    assert lacking_characters(bundled.tokenizer, words) == lacking
    for character in lacking:  # each one alone is [UNK] too
        assert bundled.tokenizer.tokenize(character) == ["[UNK]"]


def test_every_unknown_token_is_counted(bundled):
    table = table_for(bundled.tokenizer, "I love 🤖 and 🙂")
    assert table["token"].tolist().count("[UNK]") == 2
    assert token_counts(table, "[UNK]", 5).unknown == 2


def test_vocabulary_kinds_of_bert_base_uncased(bundled):
    """bert-base-uncased's 30,522 entries: 5 special, 994 [unused…], 5,828 "##" pieces, 997 single characters."""
    kinds = vocabulary_facts(bundled.tokenizer).kinds.set_index("kind of entry")["entries"].to_dict()
    vocab = bundled.tokenizer.get_vocab()
    assert sum(t.startswith("##") for t in vocab) == 5828 and sum(len(t) == 1 for t in vocab) == 997
    assert kinds == {
        "word or word start": 22698,
        "continuation piece (##…)": 5828,
        "single character": 997,
        "[unused…] (reserved: no text maps to them)": 994,
        "special": 5,
    }
