"""BERT's family (issue 51): the description of each checkpoint, loading, and the shared pass.

Random weights: no family checkpoint but the bundled encoder can be had here (no Hub), so every
family is a tiny randomly initialised model built by ``bertlens.synthetic``, with a tokenizer of
its family's kind trained offline. These tests check the description against the config and the
weights that were saved, and every number of the shared pass against the model's own outputs and
transformers' fill-mask pipeline; they say nothing about what real checkpoints predict. Only
``test_the_bundled_encoder_is_described_from_its_real_weights`` reads real weights.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import transformers
from safetensors.torch import load_file, save_file
from transformers import ElectraForMaskedLM, pipeline

from bertlens.analysis import analyze, encode, forward_batch
from bertlens.family import DROPPED, ELECTRA_GENERATOR, FAMILIES, HEAD_NAMES, tokenizer_scheme
from bertlens.mlm import top_k_guesses
from bertlens.models import (
    BUNDLED_MODEL,
    ModelUnavailable,
    NotBertError,
    load_checkpoint,
    load_family_model,
    load_model,
)
from bertlens.synthetic import family_tokenizer, save_random_family_model

BARE_ENCODERS = {  # the family's encoder without any head
    "bert": "BertModel",
    "distilbert": "DistilBertModel",
    "roberta": "RobertaModel",
    "xlm-roberta": "XLMRobertaModel",
    "camembert": "CamembertModel",
    "albert": "AlbertModel",
    "electra": "ElectraModel",
    "modernbert": "ModernBertModel",
}
# family: tokenizer kind, its marker, [CLS], [SEP], mask, token types, positions, attention, heads, pooler
EXPECTED = {
    "bert": ("WordPiece", "##", "[CLS]", "[SEP]", "[MASK]", True, "learned absolute", "full", ("MLM", "NSP"), True),
    "distilbert": ("WordPiece", "##", "[CLS]", "[SEP]", "[MASK]", False, "learned absolute", "full", ("MLM",), False),
    "roberta": ("byte-level BPE", "Ġ", "<s>", "</s>", "<mask>", False, "learned absolute", "full", ("MLM",), False),
    "xlm-roberta": (
        "SentencePiece Unigram", "▁", "<s>", "</s>", "<mask>", False, "learned absolute", "full", ("MLM",), False,
    ),
    "camembert": (
        "SentencePiece Unigram", "▁", "<s>", "</s>", "<mask>", False, "learned absolute", "full", ("MLM",), False,
    ),
    "albert": (
        "SentencePiece Unigram", "▁", "[CLS]", "[SEP]", "[MASK]", True, "learned absolute", "full", ("MLM", "SOP"), True,
    ),
    "electra": ("WordPiece", "##", "[CLS]", "[SEP]", "[MASK]", True, "learned absolute", "full", ("RTD",), False),
    "modernbert": ("byte-level BPE", "Ġ", "[CLS]", "[SEP]", "[MASK]", False, "rotary", "local and global", ("MLM",), False),
}  # fmt: skip
FAMILY_NAMES = sorted(FAMILIES)
TEXT, TEXT_B = "The quick cat reads a {mask}.", "In Paris, my dog sees the old garden!"


@pytest.fixture(scope="session")
def family_dirs() -> dict[tuple[str, str], Path]:
    """Saved tiny models by (family, variant), built on first use: "pretraining" (every head), "bare"."""
    return {}


def saved(family_dirs, tmp_path_factory, family: str, variant: str = "pretraining") -> Path:
    if (family, variant) not in family_dirs:
        folder = tmp_path_factory.mktemp(f"{family}-{variant}")
        model_class = {"bare": getattr(transformers, BARE_ENCODERS[family]), "generator": ElectraForMaskedLM}.get(
            variant
        )
        family_dirs[family, variant] = save_random_family_model(folder, family, model_class)
    return family_dirs[family, variant]


@pytest.fixture(scope="session")
def family_bundles() -> dict[str, object]:
    """Loaded tiny models by family, loaded on first use."""
    return {}


def bundle_of(family_bundles, family_dirs, tmp_path_factory, family: str):
    if family not in family_bundles:
        family_bundles[family] = load_family_model(str(saved(family_dirs, tmp_path_factory, family)))
    return family_bundles[family]


@pytest.fixture
def family_bundle(request, family_bundles, family_dirs, tmp_path_factory):
    return bundle_of(family_bundles, family_dirs, tmp_path_factory, request.param)


@pytest.mark.parametrize("family_bundle", FAMILY_NAMES, indirect=True)
def test_the_description_says_what_the_checkpoint_has(family_bundle):
    """Random weights. Each field against what was saved: the config, the tokenizer, the heads' weights."""
    described, model, tokenizer = family_bundle.description, family_bundle.model, family_bundle.tokenizer
    config = model.config
    kind, marker, cls, sep, mask, token_types, positions, attention, heads, pooler = EXPECTED[described.family]
    assert described.model_type == config.model_type and described.family_name == FAMILIES[config.model_type].name
    assert (described.tokenizer.kind, described.tokenizer.marker) == (kind, marker)
    pieces = tokenizer.tokenize("The quick cat reads a book in Paris")
    assert any(marker in piece for piece in pieces)  # the marker is the one its tokens carry
    assert described.tokenizer.marker_starts_word == (marker != "##")
    assert (described.cls_token, described.sep_token, described.mask_token) == (cls, sep, mask)
    assert (tokenizer.cls_token, tokenizer.sep_token, tokenizer.mask_token) == (cls, sep, mask)
    assert described.token_types == token_types == (getattr(config, "type_vocab_size", 0) >= 2)
    assert (described.positions, described.attention) == (positions, attention)
    assert described.heads == heads and described.pooler == pooler
    assert described.num_layers == config.num_hidden_layers and described.hidden_size == config.hidden_size
    assert described.num_heads == config.num_attention_heads and described.vocab_size == len(tokenizer)
    # Only ALBERT shares its layers; ALBERT and ELECTRA factorise their embeddings (16 wide, hidden 32).
    assert described.shares_layers == (described.family == "albert")
    assert described.factorised_embeddings == (described.family in ("albert", "electra"))
    if described.factorised_embeddings:
        assert model.get_input_embeddings().weight.shape[1] == described.embedding_size == 16
    if described.shares_layers:
        assert described.distinct_layers == config.num_hidden_groups == len(model.albert.encoder.albert_layer_groups)
    if described.attention == "local and global":  # ModernBERT: every third layer global, from the first
        assert described.local_window == config.local_attention == 4 and described.global_layers == (0,)
        assert config.layer_types == ["full_attention", "sliding_attention", "sliding_attention"]
    else:
        assert described.local_window is None and described.global_layers == tuple(range(config.num_hidden_layers))
    # The BERT view the pages read today follows the description.
    caps = family_bundle.capabilities
    assert (caps.has_mlm_head, caps.has_nsp_head, caps.has_pooler) == ("MLM" in heads, "NSP" in heads, pooler)


@pytest.mark.parametrize("family_bundle", FAMILY_NAMES, indirect=True)
def test_every_missing_part_has_a_reason(family_bundle):
    described = family_bundle.description
    parts = {m.part for m in described.missing}
    assert not parts & set(described.heads)
    assert ("NSP" in parts) == (described.family != "bert")
    assert ("pooler" in parts) != described.pooler and ("token types" in parts) != described.token_types
    assert all(m.reason and described.why_missing(m.part) == m.reason for m in described.missing)
    assert described.why_missing("MLM" if described.has("MLM") else "RTD") is None
    if described.family in ("roberta", "xlm-roberta", "camembert"):
        assert "RoBERTa" in described.why_missing("NSP")
    if described.family == "albert":
        assert "sentence-order prediction" in described.why_missing("NSP")
    if described.family == "electra":
        assert "replaced tokens" in described.why_missing("MLM")


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_a_checkpoint_without_its_heads_has_none(family, family_dirs, tmp_path_factory):
    """Random weights. A bare encoder loads into the pre-training class with random heads: they are no heads."""
    bundle = load_family_model(str(saved(family_dirs, tmp_path_factory, family, "bare")))
    described = bundle.description
    assert described.heads == ()
    assert described.pooler == (family in ("bert", "albert"))  # their bare encoders have a pooler
    for head in FAMILIES[family].heads:
        if head == "MLM" and family == "electra":
            continue  # the discriminator never had one
        assert described.why_missing(head) == DROPPED.format(part=f"{HEAD_NAMES[head]} head ({head})")
    assert analyze(bundle, TEXT.format(mask=described.mask_token)).mlm_logits is None


def test_electras_generator_is_an_mlm_without_replaced_token_detection(family_dirs, tmp_path_factory):
    bundle = load_family_model(str(saved(family_dirs, tmp_path_factory, "electra", "generator")))
    assert type(bundle.model) is ElectraForMaskedLM
    assert bundle.description.heads == ("MLM",) and bundle.description.why_missing("RTD") == ELECTRA_GENERATOR


@pytest.mark.parametrize("family", [f for f in FAMILY_NAMES if f != "bert"])
def test_the_pages_loader_loads_every_family(family, family_dirs, tmp_path_factory):
    """Random weights. The pages show every family: ``load_model`` (the app's) loads each member as
    ``load_family_model`` does; only a narrower set of families refuses one, naming it."""
    folder = str(saved(family_dirs, tmp_path_factory, family))
    assert load_model(folder).description == load_family_model(folder).description
    with pytest.raises(NotBertError, match=FAMILIES[family].name):
        load_checkpoint(folder, frozenset({"bert"}))


def test_a_family_checkpoint_missing_encoder_weights_is_broken(tmp_path, family_dirs, tmp_path_factory):
    """Heads and pooler may be missing; a missing encoder weight is a broken checkpoint, named by family."""
    folder = saved(family_dirs, tmp_path_factory, "roberta")
    for file in folder.iterdir():
        (tmp_path / file.name).write_bytes(file.read_bytes())
    weights = load_file(tmp_path / "model.safetensors")
    del weights["roberta.encoder.layer.0.attention.self.query.weight"]
    save_file(weights, tmp_path / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ModelUnavailable, match="of RoBERTa's weights"):
        load_family_model(str(tmp_path))


def own_outputs(bundle, text: str, text_b: str | None):
    """The pre-training class's own forward pass on the tokenizer's own encoding."""
    token_types = bundle.description.token_types  # (ALBERT's tokenizer leaves them out unless asked)
    inputs = bundle.tokenizer(text, text_b, return_tensors="pt", return_token_type_ids=token_types)
    with torch.inference_mode():
        return inputs, bundle.model(**inputs, output_hidden_states=True, output_attentions=True)


@pytest.mark.parametrize("family_bundle", FAMILY_NAMES, indirect=True)
def test_the_shared_pass_is_the_models_own(family_bundle):
    """Random weights. Hidden states, attentions and every head's numbers equal the model's own outputs."""
    described = family_bundle.description
    text = TEXT.format(mask=described.mask_token)
    analysis = analyze(family_bundle, text, TEXT_B)
    inputs, out = own_outputs(family_bundle, text, TEXT_B)
    assert list(analysis.encoding.input_ids) == inputs["input_ids"][0].tolist()
    assert len(out.hidden_states) == described.num_layers + 1 == len(analysis.hidden_states)
    np.testing.assert_allclose(analysis.hidden_states, torch.stack(out.hidden_states)[:, 0].numpy(), atol=1e-5)
    np.testing.assert_allclose(analysis.attentions, torch.stack(out.attentions)[:, 0].numpy(), atol=1e-6)
    np.testing.assert_allclose(analysis.attentions.sum(-1), 1.0, atol=1e-5)
    # The mask is the model's own token: one position, where the tokenizer put its mask id.
    mask_id = family_bundle.tokenizer.mask_token_id
    assert analysis.mask_positions == (inputs["input_ids"][0].tolist().index(mask_id),)
    heads = set(described.heads)
    if "MLM" in heads:
        scores = out.prediction_logits if described.family in ("bert", "albert") else out.logits
        np.testing.assert_allclose(analysis.mlm_logits[0], scores[0, analysis.mask_positions[0]], atol=1e-4)
    if "NSP" in heads:
        np.testing.assert_allclose(analysis.nsp_logits, out.seq_relationship_logits[0], atol=1e-5)
    if "SOP" in heads:
        np.testing.assert_allclose(analysis.sop_logits, out.sop_logits[0], atol=1e-5)
    if "RTD" in heads:
        np.testing.assert_allclose(analysis.rtd_logits, out.logits[0], atol=1e-5)
    absent = {
        "MLM": analysis.mlm_logits, "NSP": analysis.nsp_logits, "SOP": analysis.sop_logits, "RTD": analysis.rtd_logits
    }  # fmt: skip
    assert all(value is None for head, value in absent.items() if head not in heads)
    assert (analysis.pooler_output is not None) == described.pooler


@pytest.mark.parametrize("family_bundle", FAMILY_NAMES, indirect=True)
def test_a_padded_batch_equals_one_pass_per_input(family_bundle):
    """Random weights. ModernBERT's local windows and RoBERTa's padding-aware positions included."""
    tokenizer = family_bundle.tokenizer
    short = encode(tokenizer, "The cat reads.")
    long = encode(tokenizer, TEXT.format(mask=family_bundle.description.mask_token), TEXT_B)
    batched = forward_batch(family_bundle, [short, long])
    for encoding, result in zip([short, long], batched):
        [alone] = forward_batch(family_bundle, [encoding])
        np.testing.assert_allclose(result.hidden_states, alone.hidden_states, atol=1e-5)
        np.testing.assert_allclose(result.attentions, alone.attentions, atol=1e-6)


@pytest.mark.parametrize("family", [f for f in FAMILY_NAMES if "MLM" in EXPECTED[f][8]])
def test_the_mlm_guesses_are_the_fill_mask_pipelines(family, family_bundles, family_dirs, tmp_path_factory):
    """Random weights. The top guesses and their probabilities equal transformers' fill-mask pipeline."""
    bundle = bundle_of(family_bundles, family_dirs, tmp_path_factory, family)
    folder = str(saved(family_dirs, tmp_path_factory, family))
    text = TEXT.format(mask=bundle.description.mask_token)
    fill = pipeline("fill-mask", model=folder, tokenizer=folder, model_kwargs={"attn_implementation": "eager"})
    expected = fill(text, top_k=5)
    [guesses] = top_k_guesses(analyze(bundle, text), bundle.tokenizer, 5)
    assert list(guesses.token_ids) == [row["token"] for row in expected]
    np.testing.assert_allclose(guesses.probabilities, [row["score"] for row in expected], rtol=1e-4)
    assert list(guesses.strings) == [row["token_str"] for row in expected]


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_each_tokenizer_is_of_its_familys_kind_and_built_offline(family):
    tokenizer = family_tokenizer(family)
    assert tokenizer_scheme(tokenizer).kind == EXPECTED[family][0]
    assert tokenizer.mask_token == EXPECTED[family][4] and tokenizer.mask_token_id is not None
    assert tokenizer.unk_token_id not in tokenizer("The quick cat reads a book in Paris!")["input_ids"]


def test_a_mask_of_another_family_is_just_text(family_bundles, family_dirs, tmp_path_factory):
    """RoBERTa's mask is <mask>: BERT's [MASK] typed into it is ordinary text, not a mask."""
    bundle = bundle_of(family_bundles, family_dirs, tmp_path_factory, "roberta")
    assert analyze(bundle, "The cat [MASK] a book.").mask_positions == ()


def test_the_bundled_encoder_is_described_from_its_real_weights(bundled):
    """Real weights (the bundled MiniLM encoder, a BERT checkpoint without heads)."""
    described = bundled.description
    assert (described.family, described.tokenizer.kind, described.tokenizer.marker) == ("bert", "WordPiece", "##")
    assert described.heads == () and described.token_types and described.positions == "learned absolute"
    assert (described.num_layers, described.num_heads, described.hidden_size) == (6, 12, 384)
    assert not described.shares_layers and not described.factorised_embeddings and not described.cased
    assert described.why_missing("MLM") == DROPPED.format(part="masked language modelling head (MLM)")
    assert bundled.name == BUNDLED_MODEL


def test_modernberts_local_layers_attend_within_their_window(family_bundles, family_dirs, tmp_path_factory):
    """Random weights. The description's pattern is what the attentions show: global layers reach every token,
    local ones only ``local_window // 2`` tokens either side."""
    bundle = bundle_of(family_bundles, family_dirs, tmp_path_factory, "modernbert")
    described = bundle.description
    attentions = analyze(bundle, "The quick cat reads a book in Paris and the dog sees the garden.").attentions
    reach = np.abs(np.subtract.outer(np.arange(attentions.shape[-1]), np.arange(attentions.shape[-1])))
    for layer, weights in enumerate(attentions):
        farthest = reach[(weights > 0).any(axis=0)].max()
        assert farthest == (reach.max() if layer in described.global_layers else described.local_window // 2)


@pytest.mark.parametrize("family_bundle", FAMILY_NAMES, indirect=True)
def test_the_longest_input_runs(family_bundle):
    """Random weights. Text longer than the model takes is cut to ``max_positions`` tokens, which it accepts
    (RoBERTa's family: two position embeddings fewer, its positions start after the padding id)."""
    analysis = analyze(family_bundle, "The quick cat reads a book. " * 40)
    assert analysis.encoding.truncated and len(analysis.encoding) == family_bundle.description.max_positions
    offset = 2 if family_bundle.description.family in ("roberta", "xlm-roberta", "camembert") else 0
    assert family_bundle.description.max_positions == family_bundle.model.config.max_position_embeddings - offset
