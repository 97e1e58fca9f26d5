"""BERT's family (issue 51, step 2): the core of every page runs on each member, through its description.

Random weights: every family is a tiny randomly initialised model built by ``bertlens.synthetic`` (no Hub here).
Each test checks a page's numbers against a direct computation with the model's own modules or outputs
(parameter counts against ``model.parameters()``, head probabilities against the softmax of the model's own
logits, recomputed attention against the pass's); they say nothing about what real checkpoints predict.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from bertlens.analysis import analyze, encode
from bertlens.anatomy import (
    bundle_named_parameters,
    bundle_parameter_counts,
    embedding_parts,
    forward_outputs,
    has_every_part,
    module_tree,
    pooler_check,
)
from bertlens.attention import head_statistics
from bertlens.family import FAMILIES, NO_POSITION_TABLE, NotInThisFamily, encoder_of, in_model_tokens, layer_scope
from bertlens.influence import mask_and_see
from bertlens.mlm import check_true_word, softmax, with_mask_token
from bertlens.models import load_family_model
from bertlens.nsp import PAIR_LABELS, evaluate_pairs, rank_candidates, score_pairs
from bertlens.positions import position_embeddings
from bertlens.pretraining import pretraining_step
from bertlens.senses import embed_word
from bertlens.steps import head_steps, layer_guesses
from bertlens.tokenization import continuation_column, look_up, mask_effect, pad_batch, token_table, vocabulary_facts
from tests.core.test_family import FAMILY_NAMES, TEXT, TEXT_B, saved

WITH_MLM = [f for f in FAMILY_NAMES if f != "electra"]  # ELECTRA's discriminator has replaced-token detection


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """Loaded tiny models by (family, variant), built on first use."""
    folders: dict = {}
    loaded: dict = {}

    def bundle(family: str, variant: str = "pretraining"):
        if (family, variant) not in loaded:
            loaded[family, variant] = load_family_model(str(saved(folders, tmp_path_factory, family, variant)))
        return loaded[family, variant]

    return bundle


def own_inputs(bundle, input_ids, token_type_ids=None) -> dict[str, torch.Tensor]:
    """A batch of one for the model's own forward pass (token types only to a model that has them)."""
    inputs = {"input_ids": torch.tensor([list(input_ids)])}
    if bundle.description.token_types and token_type_ids is not None:
        inputs["token_type_ids"] = torch.tensor([list(token_type_ids)])
    return inputs


def own_logits(bundle, inputs: dict[str, torch.Tensor], name: str) -> np.ndarray:
    """One of the pre-training class's own outputs: "mlm" (prediction_logits or logits) or "pair" (NSP or SOP)."""
    with torch.inference_mode():
        out = bundle.model(**inputs)
    keys = ("prediction_logits", "logits") if name == "mlm" else ("seq_relationship_logits", "sop_logits")
    return next(out[key] for key in keys if key in out)[0].numpy()


# --- anatomy ---------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("variant", ["pretraining", "bare"])
def test_parameter_counts_add_up_to_the_models_own(bundles, family, variant):
    """Random weights. The rows that add up sum to ``model.parameters()`` (shared tensors once), less the heads and
    pooler the checkpoint lacks; the named parameters list the same total."""
    bundle = bundles(family, variant)
    model, described = bundle.model, bundle.description
    table = bundle_parameter_counts(bundle)
    lacking = {
        id(p)
        for part in ("MLM", "NSP", "SOP", "RTD")
        if not described.has(part)
        for p in _head_parameters(bundle, part)
    }
    if not described.pooler and getattr(encoder_of(model), "pooler", None) is not None:
        lacking |= {id(p) for p in encoder_of(model).pooler.parameters()}
    expected = sum(p.numel() for p in model.parameters() if id(p) not in lacking)
    total = int(table.loc[table["component"] == "total", "parameters"].iloc[-1])
    assert int(table.loc[table["adds up to total"], "parameters"].sum()) == total == expected
    assert int(bundle_named_parameters(bundle)["parameters"].sum()) == expected
    absent = table[table["part"].str.endswith(" head") & table["parameters"].isna()]
    assert set(absent["part"].str.removesuffix(" head")) >= {h for h in ("MLM", "NSP") if not described.has(h)}
    assert type(encoder_of(model)).__name__ in module_tree(bundle)
    assert has_every_part(bundle) == (variant == "pretraining")


def _head_parameters(bundle, head: str) -> list[torch.nn.Parameter]:
    paths = FAMILIES[bundle.description.family].heads.get(head, ())
    modules = dict(bundle.model.named_modules())
    shared = {id(p) for p in encoder_of(bundle.model).parameters()}  # a tied decoder is the word embeddings
    return [p for path in paths if path in modules for p in modules[path].parameters() if id(p) not in shared]


def test_albert_counts_its_shared_layer_once_and_its_embedding_projection(bundles):
    """Random weights. ALBERT: two layers, one set of weights; 16-wide embeddings projected to 32."""
    bundle = bundles("albert")
    table = bundle_parameter_counts(bundle).set_index(["part", "component"])["parameters"]
    transformer = bundle.model.albert.encoder
    group = sum(p.numel() for p in transformer.albert_layer_groups.parameters())
    assert table["Encoder", "1 distinct of 2 layers"] == table["Encoder layer 0", "one layer"] == group
    projection = transformer.embedding_hidden_mapping_in
    assert table["Embeddings", "projection to hidden_size"] == projection.weight.numel() + projection.bias.numel()
    assert table["SOP head", "sentence-order classifier"] == sum(
        p.numel() for p in bundle.model.sop_classifier.parameters()
    )


def test_modernbert_has_no_position_table_and_a_gated_mlp(bundles):
    """Random weights. Rotary: no position count; its MLP's Wi makes 2 × intermediate_size."""
    bundle = bundles("modernbert")
    table = bundle_parameter_counts(bundle).set_index(["part", "component"])
    assert pd.isna(table.loc[("Embeddings", "position embeddings"), "parameters"])
    layer = bundle.model.model.layers[0]
    assert layer.mlp.Wi.out_features == 2 * bundle.description.intermediate_size
    mlp = sum(p.numel() for p in [*layer.mlp.parameters(), *layer.mlp_norm.parameters()])
    assert table.loc[("Encoder layer 0", "feed-forward"), "parameters"] == mlp
    assert table.loc[("Encoder", "final norm"), "parameters"] == sum(
        p.numel() for p in bundle.model.model.final_norm.parameters()
    )


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_the_embeddings_checks_run_where_the_embeddings_are_berts_sum(bundles, family):
    """Random weights. BERT's sum recomputed by hand equals layer 0's input; other families say why not."""
    bundle = bundles(family)
    analysis = analyze(bundle, "The cat sees a book.")
    if family == "bert":
        assert embedding_parts(bundle, analysis).max_abs_difference < 1e-5
    else:
        with pytest.raises(NotInThisFamily):
            embedding_parts(bundle, analysis)
    check = pooler_check(bundle, analysis)
    assert (check is not None) == bundle.description.pooler
    if check is not None:
        assert check.max_abs_difference < 1e-5


# --- positions -------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_position_embeddings_are_the_models_table_from_the_first_tokens_row(bundles, family):
    """Random weights. The rows start at the first token's position (RoBERTa's family: after the padding id);
    ModernBERT has no table (rotary)."""
    bundle = bundles(family)
    if bundle.description.positions == "rotary":
        with pytest.raises(NotInThisFamily, match="rotary position embeddings"):
            position_embeddings(bundle, 8)
        assert NO_POSITION_TABLE.format(name="ModernBERT").startswith("ModernBERT has no table")
        return
    embeddings = position_embeddings(bundle, 8)
    table = encoder_of(bundle.model).embeddings.position_embeddings.weight.detach().numpy()
    first = bundle.model.config.pad_token_id + 1 if family in ("roberta", "xlm-roberta", "camembert") else 0
    np.testing.assert_allclose(embeddings.norms, np.linalg.norm(table[first : first + 8], axis=1), rtol=1e-6)
    assert len(embeddings.type_norms) == (2 if bundle.description.token_types else 0)


# --- next sentence / sentence order ----------------------------------------------------------


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_pair_scores_are_the_softmax_of_the_models_own_pair_head(bundles, family):
    """Random weights. BERT: P(IsNext); ALBERT: P(in order) from its SOP head, never IsNext; the rest say why not."""
    bundle = bundles(family)
    pairs = [(TEXT.format(mask="book"), TEXT_B), ("The dog reads.", "A bird sees the old bridge in Rome.")]
    if family not in ("bert", "albert"):
        with pytest.raises(ValueError, match="no next-sentence head") as raised:
            score_pairs(bundle, pairs)
        assert bundle.description.why_missing("NSP") in str(raised.value)
        return
    p, cut = score_pairs(bundle, pairs)
    for (a, b), p_first in zip(pairs, p):
        encoding = encode(bundle.tokenizer, a, b)
        logits = own_logits(bundle, own_inputs(bundle, encoding.input_ids, encoding.token_type_ids), "pair")
        assert p_first == pytest.approx(softmax(logits)[0], abs=1e-5)
    assert cut == [False, False]
    head = "NSP" if family == "bert" else "SOP"
    assert bundle.description.has(head) and PAIR_LABELS[head][0] == ("IsNext" if head == "NSP" else "in order")
    if head == "SOP":  # the IsNext tables refuse it
        with pytest.raises(ValueError, match="sentence order"):
            rank_candidates(bundle, pairs[0][0], [pairs[0][1]])
        with pytest.raises(ValueError, match="not P\\(IsNext\\)"):
            evaluate_pairs(bundle, pd.DataFrame({"sentence_a": ["A."], "sentence_b": ["B."], "is_next": [True]}))
    else:
        assert rank_candidates(bundle, pairs[0][0], [pairs[0][1]])["p_is_next"][0] == pytest.approx(p[0])


# --- pre-training --------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_pretraining_guesses_are_the_models_own_mlm_logits(bundles, family):
    """Random weights. The corrupted input through the model's own forward pass gives the same P(original)."""
    bundle = bundles(family)
    encoding = encode(bundle.tokenizer, "The quick cat reads a book in Paris and the old dog sees a garden.")
    if family == "electra":
        with pytest.raises(ValueError, match="replaced tokens"):
            pretraining_step(bundle, encoding, draw=1)
        return
    step = pretraining_step(bundle, encoding, draw=1)
    assert len(step.table)
    logits = own_logits(bundle, own_inputs(bundle, step.corruption.input_ids, encoding.token_type_ids), "mlm")
    probabilities = softmax(logits)
    for row in step.table.to_dict("records"):
        original = encoding.input_ids[row["position"]]
        assert row["P(original)"] == pytest.approx(probabilities[row["position"], original], rel=1e-4, abs=1e-7)


# --- steps -----------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_head_steps_recompute_the_models_attention(bundles, family):
    """Random weights. q·k/√d and the softmax, from the layer's own projections, give the pass's attention row
    (ALBERT: its one shared layer, for both layers); ModernBERT's fused, rotated projections are not shown."""
    bundle = bundles(family)
    analysis = analyze(bundle, "The quick cat reads a book in Paris.")
    for layer in range(bundle.description.num_layers):
        if family == "modernbert":
            with pytest.raises(NotInThisFamily, match="fused"):
                head_steps(bundle, analysis, layer, head=1, query=2)
            continue
        steps = head_steps(bundle, analysis, layer, head=1, query=2)
        assert steps.max_abs_difference < 1e-5
        assert steps.head_size == bundle.description.hidden_size // bundle.description.num_heads


@pytest.mark.parametrize("family", WITH_MLM)
def test_layer_guesses_end_with_the_models_own_guesses(bundles, family):
    """Random weights. The last row of the logit lens is the model's own top-k at the mask (its own forward pass);
    every row is the MLM head on that layer's hidden state."""
    bundle = bundles(family)
    analysis = analyze(bundle, TEXT.format(mask=bundle.description.mask_token))
    guesses = layer_guesses(bundle, analysis, k=3)
    encoding, position = analysis.encoding, analysis.mask_positions[0]
    probabilities = softmax(own_logits(bundle, own_inputs(bundle, encoding.input_ids, encoding.token_type_ids), "mlm"))
    top = np.argsort(-probabilities[position], kind="stable")[:3]
    assert list(guesses.token_ids[-1]) == top.tolist()
    np.testing.assert_allclose(guesses.probabilities[-1], probabilities[position, top], rtol=1e-4)
    assert guesses.token_ids.shape == (bundle.description.num_layers + 1, 3)


# --- mask and see ----------------------------------------------------------------------------


@pytest.mark.parametrize("family", WITH_MLM)
def test_mask_and_see_guess_is_the_models_own_guess_with_a_token_hidden(bundles, family):
    """Random weights. Hiding one token: the new guess distribution is the model's own at the mask."""
    bundle = bundles(family)
    analysis = analyze(bundle, TEXT.format(mask=bundle.description.mask_token))
    hide = 2
    seen = mask_and_see(bundle, analysis, "mask", hide=hide)
    assert seen.measure == "guess" and seen.tested == (hide,)
    ids = list(analysis.encoding.input_ids)
    ids[hide] = bundle.tokenizer.mask_token_id
    logits = own_logits(bundle, own_inputs(bundle, ids, analysis.encoding.token_type_ids), "mlm")
    after = softmax(logits[analysis.mask_positions[0]])
    before = softmax(analysis.mlm_logits[0])
    assert seen.effect[0] == pytest.approx(0.5 * np.abs(after - before).sum(), abs=1e-5)


def test_mask_and_see_watches_albert_sentence_order_not_is_next(bundles):
    """Random weights. ALBERT's pair: the measure is P(in order), from its own SOP logits."""
    bundle = bundles("albert")
    analysis = analyze(bundle, "The cat sees a book.", "The dog reads a letter.")
    seen = mask_and_see(bundle, analysis, "mask", hide=2)
    assert seen.measure == "order"
    ids = list(analysis.encoding.input_ids)
    ids[2] = bundle.tokenizer.mask_token_id
    after = softmax(own_logits(bundle, own_inputs(bundle, ids, analysis.encoding.token_type_ids), "pair"))[0]
    assert seen.effect[0] == pytest.approx(abs(after - softmax(analysis.sop_logits)[0]), abs=1e-5)
    assert seen.after[0] == f"{after:.4f}"


def test_mask_and_see_on_electra_moves_vectors(bundles):
    """Random weights. ELECTRA's discriminator has no MLM and no pair head: the other tokens' vectors are watched."""
    bundle = bundles("electra")
    seen = mask_and_see(bundle, analyze(bundle, "The cat sees a book."), "mask", hide=2)
    assert seen.measure == "vectors" and len(seen.effect) == 1


# --- senses, tokenization --------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_word_vectors_are_the_models_own_hidden_states(bundles, family):
    """Random weights. Each occurrence's vectors are the mean of its pieces' hidden states in the model's own pass;
    the static vector is its input embedding rows (ALBERT's and ELECTRA's are 16 wide)."""
    bundle = bundles(family)
    sentences = ["The cat sees a book.", "A dog reads the book in Paris."]
    words = embed_word(bundle, sentences, "book")
    assert len(words.occurrences) == 2
    table = bundle.model.get_input_embeddings().weight.detach().numpy()
    for occurrence, contextual, static in zip(words.occurrences, words.contextual, words.static):
        encoding = encode(bundle.tokenizer, sentences[occurrence.sentence_index])
        with torch.inference_mode():
            inputs = own_inputs(bundle, encoding.input_ids, encoding.token_type_ids)
            hidden = encoder_of(bundle.model)(**inputs, output_hidden_states=True).hidden_states
        mine = torch.stack(hidden)[:, 0, list(occurrence.positions)].mean(dim=1).numpy()
        np.testing.assert_allclose(contextual, mine, atol=1e-5)
        ids = [encoding.input_ids[p] for p in occurrence.positions]
        np.testing.assert_allclose(static, table[ids].mean(axis=0), atol=1e-6)
    assert words.static.shape[1] == bundle.description.embedding_size


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_tokenization_reads_the_models_own_marker_and_special_tokens(bundles, family):
    """Random weights (the tokenizers are trained offline). Continuations follow the tokenizer's marker; the
    attention statistics find the model's own [CLS] and [SEP]; the attention mask changes nothing unpadded."""
    bundle = bundles(family)
    described = bundle.description
    text = "The remembered gardens of Madrid"
    encoding = encode(bundle.tokenizer, text)
    table = token_table(encoding, text, scheme=described.tokenizer)
    pieces = bundle.tokenizer(text, return_offsets_mapping=True)
    same_word = [
        i > 0 and pieces.word_ids()[i] is not None and pieces.word_ids()[i - 1] == pieces.word_ids()[i]
        for i in range(len(encoding))
    ]
    assert table[continuation_column(described.tokenizer)].tolist() == same_word
    assert continuation_column(described.tokenizer) == (
        f"continuation (no {described.tokenizer.marker})"
        if described.tokenizer.marker_starts_word
        else "continuation (##)"
    )
    facts = vocabulary_facts(bundle.tokenizer)
    assert any(described.tokenizer.marker in kind for kind in facts.kinds["kind of entry"])
    assert look_up(bundle.tokenizer, described.mask_token).kind == "special"
    analysis = analyze(bundle, text)
    stats = head_statistics(analysis.attentions, analysis.encoding, described.cls_token, described.sep_token)
    assert np.all(stats["cls"] > 0) and np.all(stats["sep"] > 0)
    batch = pad_batch(bundle.tokenizer, ["The cat.", text], "longest", 64, truncation=False)
    distances = mask_effect(bundle, batch)["[CLS] L2 distance"].to_numpy()
    assert distances[1] == pytest.approx(0.0, abs=1e-5) and distances[0] > 0


@pytest.mark.parametrize("family", ["roberta", "modernbert"])
def test_a_true_word_is_read_as_after_a_space_by_byte_level_bpe(bundles, family):
    """Random weights. At a mask after a space the model predicts "Ġbook"; the true word is scored as that."""
    bundle = bundles(family)
    analysis = analyze(bundle, TEXT.format(mask=bundle.description.mask_token))
    check = check_true_word(analysis, bundle.tokenizer, "book")
    assert check.token.startswith("Ġ") and check.mask_token == bundle.description.mask_token
    assert check.token_id == bundle.tokenizer.convert_tokens_to_ids(bundle.tokenizer.tokenize(" book"))[0]


# --- the pages' wording for the model ------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_lesson_text_and_links_use_the_models_own_special_tokens(bundles, family):
    """A text written for BERT names the model's own tokens: its mask in a sentence, every special token in a
    lesson's Markdown (as code spans: a bare <mask> would be taken for HTML)."""
    described = bundles(family).description
    assert (
        with_mask_token("A [MASK] and a <mask>.", described.mask_token)
        == f"A {described.mask_token} and a {described.mask_token}."
    )
    said = in_model_tokens("`[CLS]` A [SEP] B, hidden behind `[MASK]`.", described)
    if described.cls_token == "[CLS]":
        assert said.startswith("`[CLS]` A [SEP] B")
    else:
        assert said.startswith(f"`{described.cls_token}` A `{described.sep_token}` B")
    assert said.endswith(f"`{described.mask_token}`.") and said.count("`") % 2 == 0


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_only_modernberts_local_layers_are_named_local(bundles, family):
    """Random weights (ModernBERT: global every third layer, a 4-token window). The label matches the attention:
    a local layer's weights are 0 beyond the window."""
    bundle = bundles(family)
    described = bundle.description
    scopes = [layer_scope(described, layer) for layer in range(described.num_layers)]
    if family != "modernbert":
        assert scopes == [None] * described.num_layers
        return
    assert scopes[0].startswith("a global layer") and all(s.startswith("a local layer") for s in scopes[1:])
    attentions = analyze(bundle, "The quick cat reads a book in Paris with the old dog").attentions
    far = np.abs(np.subtract.outer(np.arange(attentions.shape[-1]), np.arange(attentions.shape[-1]))) > 2
    assert np.all(attentions[1][:, far] == 0) and np.any(attentions[0][:, far] > 0)


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_the_outputs_table_names_the_family_classes_own_outputs(bundles, family):
    """Random weights. The head rows are the outputs the pre-training class returns, with their shapes."""
    bundle = bundles(family)
    analysis = analyze(bundle, TEXT_B)
    table = forward_outputs(analysis, bundle.capabilities, bundle.description).set_index("output")
    with torch.no_grad():
        out = bundle.model(**own_inputs(bundle, analysis.encoding.input_ids, analysis.encoding.token_type_ids))
    for name in ("prediction_logits", "seq_relationship_logits", "sop_logits", "logits"):
        if name in table.index and table.loc[name, "shape"] is not None:
            assert table.loc[name, "shape"] == str(tuple(out[name].shape)).replace(",)", ")")
