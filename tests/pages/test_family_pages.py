"""Every page on every member of BERT's family (issue 51), opened from a link on a tiny model saved to a folder.

Random weights: no family checkpoint can be downloaded here, so each family is a tiny randomly initialised model of
its pre-training class with a tokenizer of its own kind trained offline (``bertlens.synthetic``). Each test checks
what a page shows against the model loaded apart from the app (transformers' own classes on the same folder): its
tokens, parameter count, heads' probabilities and attention weights; and that a head the checkpoint lacks is
explained, with no number. They say nothing about what real checkpoints predict.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers
from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer, ElectraForPreTraining

from bertlens.family import FAMILIES, MASKING_RECIPES, MLM_LOSS_SHARE
from bertlens.models import BUNDLED_MODEL, bundled_model_path
from bertlens.synthetic import family_tokenizer, save_random_family_model
from tests.conftest import drawn_charts, tables
from tests.pages.test_attention_page import drawn_z, specs

FAMILY_NAMES = sorted(FAMILIES)
TEXT = "The quick cat reads a {mask}."  # the link writes BERT's mask: the page writes the model's own
TEXT_B = "In Paris, my dog sees the old garden!"
MARKERS = {  # the continuation column each tokenizer's marker names: ## continues a word, Ġ and ▁ start one
    "bert": "continuation (##)",
    "distilbert": "continuation (##)",
    "electra": "continuation (##)",
    "roberta": "continuation (no Ġ)",
    "modernbert": "continuation (no Ġ)",
    "albert": "continuation (no ▁)",
    "xlm-roberta": "continuation (no ▁)",
    "camembert": "continuation (no ▁)",
}
ROBERTA_MASK = ("roberta", "xlm-roberta", "camembert")  # <mask>; the others [MASK]
WITH_MLM = [f for f in FAMILY_NAMES if f != "electra"]  # ELECTRA's discriminator detects replaced tokens instead
PAIR_HEADS = {"bert": ("P(IsNext)", "seq_relationship_logits"), "albert": ("P(in order)", "sop_logits")}


def shown(at) -> str:
    return " ".join(
        str(e.value) for kind in ("markdown", "caption", "warning", "info", "success") for e in at.get(kind)
    )


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def own_model(folder, family: str):
    """The checkpoint as its family's pre-training class, loaded apart from the app."""
    model_class = getattr(transformers, FAMILIES[family].pretraining_class)
    return model_class.from_pretrained(folder, attn_implementation="eager").eval()


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_the_tokenizer_page_teaches_the_models_own_scheme(open_page, family_dir, family):
    """Random weights. The token table is the tokenizer's own (tokens and ids), and its continuation column is
    named by the model's marker and marks the pieces that continue a word."""
    folder = family_dir(family)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    text = "The remembered gardens of Madrid"
    at = open_page("pages/tokenizer.py", folder, text=text)
    assert not at.exception, at.exception
    table = next(t for t in tables(at) if "token_type_ids" in t.columns)
    encoding = tokenizer(text)
    assert table["id"].tolist() == encoding["input_ids"]
    assert table["token"].tolist() == tokenizer.convert_ids_to_tokens(encoding["input_ids"])
    column = MARKERS[family]
    assert column in table.columns and not {c for c in MARKERS.values() if c != column} & set(table.columns)
    words = encoding.word_ids()
    if column == "continuation (##)":
        expected = [token.startswith("##") for token in table["token"]]
    else:
        expected = [i > 0 and words[i] is not None and words[i - 1] == words[i] for i in range(len(words))]
    assert table[column].tolist() == expected
    marker = column.removeprefix("continuation (").removeprefix("no ").removesuffix(")")
    assert f"{marker} marks a piece that" in shown(at)
    if family == "roberta":  # the same text through a second tokenizer: the bundled encoder's WordPiece
        at.selectbox(key="other_tokenizer").set_value(BUNDLED_MODEL).run()
        assert not at.exception, at.exception
        bundled = AutoTokenizer.from_pretrained(bundled_model_path())
        texts = [t.value for t in at.text]
        assert " ".join(tokenizer.convert_ids_to_tokens(encoding["input_ids"])) in texts
        assert " ".join(bundled.convert_ids_to_tokens(bundled(text)["input_ids"])) in texts
        assert "## marks a piece that continues a word" in shown(at)


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_the_anatomy_diagram_adds_up_to_the_models_own_parameters(open_page, family_dir, family):
    """Random weights. The architecture's boxes add up to the pre-training class's own parameter count (shared
    tensors once: ALBERT's one layer, tied decoders), under the family's name."""
    folder = family_dir(family)
    at = open_page("pages/anatomy.py", folder)
    assert not at.exception, at.exception
    total = sum(p.numel() for p in own_model(folder, family).parameters())
    assert f"add up to {total:,}." in shown(at)
    (figure,) = specs(at)
    name = FAMILIES[family].name
    assert figure["layout"]["title"]["text"].startswith(f"{name}'s architecture")


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_fill_mask_uses_the_models_own_mask_token_and_head(open_page, family_dir, family):
    """Random weights. A link's [MASK] becomes the model's own mask token in the sentence and the link; each guess's
    probability is the softmax of the model's own MLM logits at the mask, and the guesses are its top k. ELECTRA's
    discriminator has no MLM head: its reason, no guess, and P(replaced) for every token from its own RTD head."""
    folder = family_dir(family)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    mask = tokenizer.mask_token
    at = open_page("pages/fill_mask.py", folder, text=TEXT.format(mask="[MASK]"), k="5")
    assert not at.exception, at.exception
    text = TEXT.format(mask=mask)
    assert at.text_input(key="text").value == text and at.query_params["text"] == text
    assert (f"mask token is `{mask}`" in shown(at)) == (family in ROBERTA_MASK)  # said where it was rewritten
    inputs = tokenizer(text, return_tensors="pt")
    if family == "electra":
        assert "not to fill masks" in shown(at) and not [t for t in tables(at) if "rank" in t.columns]
        with torch.no_grad():
            logits = ElectraForPreTraining.from_pretrained(folder).eval()(**inputs).logits[0].numpy()
        (scores,) = [t for t in tables(at) if "P(replaced)" in t.columns]
        assert scores["token"].tolist() == tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
        np.testing.assert_allclose(scores["P(replaced)"], 1 / (1 + np.exp(-logits)), rtol=1e-4, atol=1e-6)
        return
    with torch.no_grad():
        logits = AutoModelForMaskedLM.from_pretrained(folder).eval()(**inputs).logits[0]
    position = inputs["input_ids"][0].tolist().index(tokenizer.mask_token_id)
    reference = torch.softmax(logits[position].double(), -1).numpy()
    (guesses,) = [t for t in tables(at) if "rank" in t.columns]
    assert len(guesses) == 5
    np.testing.assert_allclose(guesses["probability"], reference[guesses["token_id"].tolist()], rtol=1e-4, atol=1e-7)
    assert guesses["probability"].min() >= np.sort(reference)[-5] - 1e-6  # the top five


@pytest.mark.parametrize("family", WITH_MLM)
def test_guesses_layer_by_layer_end_with_the_models_own(open_page, family_dir, family):
    """Random weights. Wherever an MLM head exists, the guesses after every layer are drawn, and the last hidden
    state's are the top k of the model's own MLM probabilities at the mask."""
    folder = family_dir(family)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    text = TEXT.format(mask=tokenizer.mask_token)
    at = open_page("pages/fill_mask.py", folder, text=text, k="3", fill_tab="Layer by layer")
    assert not at.exception, at.exception
    inputs = tokenizer(text, return_tensors="pt")
    masked_lm = AutoModelForMaskedLM.from_pretrained(folder).eval()
    with torch.no_grad():
        logits = masked_lm(**inputs).logits[0]
    position = inputs["input_ids"][0].tolist().index(tokenizer.mask_token_id)
    top = torch.softmax(logits[position].double(), -1).topk(3)
    layers = next(t for t in tables(at) if "hidden state" in t.columns and "token_id" in t.columns)
    assert sorted(set(layers["hidden state"])) == list(range(masked_lm.config.num_hidden_layers + 1))
    last = layers[layers["hidden state"] == layers["hidden state"].max()]
    assert last["token_id"].tolist() == top.indices.tolist()
    np.testing.assert_allclose(last["probability"], top.values.numpy(), rtol=1e-4)


@pytest.mark.parametrize("family", ["bert", "roberta", "modernbert"])
def test_pretraining_masking_says_how_the_models_family_learned(open_page, family_dir, family):
    """Random weights. Pre-training's draw is BERT's recipe on the model's own mask token; a successor's page says
    what its family's paper changed (ModernBERT: 30 %), BERT's adds nothing."""
    folder = family_dir(family)
    mask = AutoTokenizer.from_pretrained(folder).mask_token
    at = open_page("pages/fill_mask.py", folder, text=TEXT.format(mask=mask), pretrain="true")
    assert not at.exception, at.exception
    said = [c.value for c in at.caption if "learned with" in c.value]
    if family == "bert":
        assert not said
    else:
        (caption,) = said
        assert f"`{mask}`" in caption and MASKING_RECIPES[family] in caption
        assert f"{FAMILIES[family].name} learned with" in caption


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_next_sentence_shows_the_pair_task_the_model_has(open_page, family_dir, family):
    """Random weights. BERT: P(IsNext) from its NSP head; ALBERT: P(in order) from its sentence-order head, never an
    IsNext label; every other family: the reason it has no pair head, and no probability."""
    folder = family_dir(family)
    a = "The quick cat reads a book."
    at = open_page("pages/next_sentence.py", folder, a=a, b=TEXT_B)
    assert not at.exception, at.exception
    if family not in PAIR_HEADS:
        assert "has no next-sentence-prediction (NSP) head" in shown(at)
        assert FAMILIES[family].paper.split()[0] in shown(at)  # the reason cites the family's paper
        assert not at.metric and not tables(at)
        return
    label, output = PAIR_HEADS[family]
    tokenizer = AutoTokenizer.from_pretrained(folder)
    with torch.no_grad():
        # Segment ids asked for: ALBERT was pre-trained with them, though its tokenizer leaves them out by default.
        pair = tokenizer(a, TEXT_B, return_tensors="pt", return_token_type_ids=True)
        logits = getattr(own_model(folder, family)(**pair), output)[0]
    p = torch.softmax(logits.double(), -1)[0].item()
    assert float(metrics(at)[label]) == pytest.approx(p, abs=6e-5)
    assert ("IsNext" in shown(at) or "IsNext" in " ".join(metrics(at))) == (family == "bert")
    name = FAMILIES[family].name
    assert f"Segments: how {name} tells A from B (token_type_ids)" in [e.label for e in at.expander]


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_attention_heatmap_is_the_models_own_and_local_layers_say_so(open_page, family_dir, family):
    """Random weights. Encoder layer 1, head 2 as drawn is the bare encoder's own attention (transformers' eager
    attention, loaded apart); ModernBERT's layer 1 attends within a window, and the page says so."""
    folder = family_dir(family)
    text = TEXT.format(mask="dog")
    at = open_page("pages/attention.py", folder, text=text, attn_layer="1", head="2")
    assert not at.exception, at.exception
    tokenizer = AutoTokenizer.from_pretrained(folder)
    with torch.no_grad():
        encoder = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
        attentions = encoder(**tokenizer(text, return_tensors="pt"), output_attentions=True).attentions
    (heatmap,) = specs(at)
    np.testing.assert_allclose(drawn_z(heatmap), attentions[1][0, 2].numpy(), atol=1e-5)
    local = "is a local layer: each token attends only to the tokens within 2 positions"
    assert (local in shown(at)) == (family == "modernbert")
    assert ("local layer" in heatmap["layout"]["title"]["text"]) == (family == "modernbert")


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_word_senses_open_on_every_family(open_page, family_dir, family):
    """Random weights. The word senses page follows its default word through the preset sentences and draws them."""
    at = open_page("pages/senses.py", family_dir(family))
    assert not at.exception, at.exception
    assert drawn_charts(at) and not at.error


@pytest.fixture(scope="module")
def padded_vocabulary_dir(tmp_path_factory):
    """A tiny random ModernBERT whose output layer is 64 rows longer than its tokenizer (as checkpoints pad their
    vocabulary to a multiple of 64), the last, token-less row made the top guess everywhere by its bias."""
    folder = tmp_path_factory.mktemp("padded-modernbert")
    tokenizer = family_tokenizer("modernbert")
    save_random_family_model(folder, "modernbert", vocab_size=len(tokenizer) + 64)
    model = AutoModelForMaskedLM.from_pretrained(folder)
    with torch.no_grad():
        model.get_output_embeddings().bias[-1] = 100.0
    model.save_pretrained(folder)
    return folder


@pytest.mark.parametrize("fill_tab", [None, "Layer by layer"])
def test_a_guess_with_no_token_is_named_by_its_id(open_page, padded_vocabulary_dir, fill_tab):
    """Random weights. An id the head scores past the tokenizer's vocabulary is a guess like any other, named
    ``[id N: no token]``, its probability the softmax of the model's own logits (it used to crash the page)."""
    folder = padded_vocabulary_dir
    tokenizer = AutoTokenizer.from_pretrained(folder)
    text = TEXT.format(mask=tokenizer.mask_token)
    tab = {"fill_tab": fill_tab} if fill_tab else {}
    at = open_page("pages/fill_mask.py", folder, text=text, k="3", **tab)
    assert not at.exception, at.exception
    inputs = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        logits = AutoModelForMaskedLM.from_pretrained(folder).eval()(**inputs).logits[0]
    last_id = logits.shape[-1] - 1
    assert last_id >= len(tokenizer)
    position = inputs["input_ids"][0].tolist().index(tokenizer.mask_token_id)
    guesses = next(t for t in tables(at) if "token_id" in t.columns and "probability" in t.columns)
    if fill_tab:
        guesses = guesses[guesses["hidden state"] == guesses["hidden state"].max()]
    first = guesses.iloc[0]
    assert (first["token_id"], first["token"]) == (last_id, f"[id {last_id}: no token]")
    reference = torch.softmax(logits[position].double(), -1)[last_id].item()
    assert first["probability"] == pytest.approx(reference, rel=1e-4)


@pytest.mark.parametrize("family", ["roberta", "albert"])
def test_the_true_word_check_says_what_the_loss_was_of_this_familys_pre_training(open_page, family_dir, family):
    """Random weights. The MLM loss was all of RoBERTa's pre-training loss (no sentence-pair task), one part of
    ALBERT's beside sentence order: the check says which, never BERT's next-sentence sum."""
    folder = family_dir(family)
    mask = AutoTokenizer.from_pretrained(folder).mask_token
    at = open_page("pages/fill_mask.py", folder, text=TEXT.format(mask=mask), true_word="mat")
    assert not at.exception, at.exception
    assert "What the loss means" in shown(at)
    assert MLM_LOSS_SHARE[family] in shown(at) and "next-sentence-prediction loss" not in shown(at)


def test_head_statistics_name_the_models_own_start_and_separator_tokens(open_page, family_dir):
    """Random weights. RoBERTa's statistics leave out its <s> and </s> rows: the note says so in its tokens."""
    at = open_page("pages/attention.py", family_dir("roberta"), attn_tab="Head statistics", text="The cat sat")
    assert not at.exception, at.exception
    note = " ".join(m.value for m in at.markdown)
    assert "(`<s>` and `</s>` rows are left out" in note and "[CLS]" not in note
