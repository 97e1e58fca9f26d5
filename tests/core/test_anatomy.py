import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import BertConfig, BertForPreTraining

from bertlens.analysis import analyze, encode
from bertlens.anatomy import (
    NOT_IN_CHECKPOINT,
    PoolerCheck,
    architecture,
    bundle_architecture,
    bundle_named_parameters,
    bundle_parameter_counts,
    config_summary,
    embedding_parts,
    forward_outputs,
    matrices_and_vectors,
    module_tree,
    named_parameters,
    parameter_counts,
    pooler_check,
    same_tokens,
)
from bertlens.models import Capabilities
from bertlens.synthetic import TINY_CONFIG, random_bert_config
from bertlens.wording import plural


@pytest.fixture(scope="module")
def bert_base():
    """A random BertForPreTraining with bert-base-uncased's exact configuration (no download)."""
    torch.manual_seed(0)
    return BertForPreTraining(random_bert_config()).eval()


def counts_by_name(table):
    return table.set_index(["part", "component"])["parameters"]


def test_bert_base_parameter_counts(bert_base):
    counts = counts_by_name(parameter_counts(bert_base.bert))  # seeds 003 and 004
    assert counts[("Base encoder", "total")] == 109_482_240
    assert counts[("Embeddings", "all embeddings")] == 23_837_184
    assert counts[("Embeddings", "word embeddings")] == 23_440_896
    assert counts[("Embeddings", "position embeddings")] == 393_216
    assert counts[("Embeddings", "token type embeddings")] == 1_536
    assert counts[("Embeddings", "LayerNorm")] == 1_536
    assert counts[("Encoder layer 0", "one layer")] == 7_087_872
    assert counts[("Encoder layer 0", "attention")] == 2_363_904
    assert counts[("Encoder layer 0", "intermediate")] == 2_362_368
    assert counts[("Encoder layer 0", "output")] == 2_361_600
    assert counts[("Encoder", "all 12 layers")] == 85_054_464
    assert counts[("Pooler", "dense + tanh on [CLS]")] == 590_592
    assert counts[("Checkpoint", "total")] == 109_482_240  # a bare BertModel has no heads
    assert pd.isna(counts[("MLM head", "fill-mask head")]) and pd.isna(counts[("NSP head", "is-next classifier")])


def test_bert_base_named_parameters(bert_base):
    named = named_parameters(bert_base.bert)
    assert len(named) == 199 and named["parameters"].sum() == 109_482_240
    matrices = sum(p.numel() for p in bert_base.bert.parameters() if p.dim() == 2)  # seed 004's own loop
    assert matrices_and_vectors(named) == (matrices, 109_482_240 - matrices) and matrices == 109_360_128
    assert named["name"].tolist()[:5] == [
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
    ]
    assert named.set_index("name").loc["encoder.layer.0.attention.self.query.weight", "shape"] == "768 × 768"
    assert named["name"].tolist()[-2:] == ["pooler.dense.weight", "pooler.dense.bias"]


def test_heads_count_the_tied_decoder_once(bert_base):
    table = parameter_counts(bert_base)
    counts = counts_by_name(table)
    unique_total = sum(p.numel() for p in bert_base.parameters())  # parameters() yields a shared tensor once
    assert counts[("Checkpoint", "total")] == unique_total == 110_106_428
    assert counts[("MLM head", "decoder weight")] == 0
    assert "tied" in table.set_index("component").loc["decoder weight", "note"]
    assert counts[("MLM head", "transform (dense + LayerNorm)")] == 592_128
    assert counts[("MLM head", "output bias")] == 30_522
    assert counts[("NSP head", "is-next classifier")] == 1_538
    assert table.loc[table["adds up to total"], "parameters"].sum() == unique_total
    assert table["% of total"].iloc[-1] == 100
    # Every share to two decimals, from the model's own parameters (position embeddings: 0.36 %, not 0 %).
    position = bert_base.bert.embeddings.position_embeddings.weight.numel()
    assert table.set_index("component").loc["position embeddings", "% of total"] == 0.36
    present = table["parameters"].notna()
    exact = 100 * table.loc[present, "parameters"].astype(float) / unique_total
    expected = [round(p, 2) if p >= 0.01 else float(f"{p:.2g}") for p in exact]  # a tiny share never reads 0.00
    np.testing.assert_array_equal(table.loc[present, "% of total"].astype(float), expected)
    assert table.set_index("component").loc["is-next classifier", "% of total"] == 0.0014  # 1,538 of 110 million
    assert round(100 * position / unique_total, 2) == 0.36
    # seed 003: "encoder layers contain 77.7 %" (of the base encoder, 109,482,240); of the checkpoint it is 77.25 %
    shares = table.set_index(["part", "component"])["% of base encoder"]
    assert shares[("Encoder", "all 12 layers")] == round(100 * 85_054_464 / 109_482_240, 2) == 77.69
    assert shares[("Base encoder", "total")] == 100 and shares[["MLM head", "NSP head", "Checkpoint"]].isna().all()


def test_missing_pooler_and_heads_are_not_counted(bert_base):
    table = parameter_counts(bert_base, has_pooler=False, has_mlm_head=False, has_nsp_head=False)
    counts = counts_by_name(table)
    assert counts[("Base encoder", "total")] == counts[("Checkpoint", "total")] == 109_482_240 - 590_592
    absent = table[table["parameters"].isna()]
    assert absent["part"].tolist() == ["Pooler", "MLM head", "NSP head"]
    assert set(absent["note"]) == {NOT_IN_CHECKPOINT}
    assert table.loc[table["adds up to total"], "parameters"].sum() == counts[("Checkpoint", "total")]


def test_the_architecture_adds_up_to_the_checkpoint_block_by_block(bert_base):
    arch = architecture(bert_base.config, parameter_counts(bert_base))
    layer = bert_base.bert.encoder.layer[0]
    assert arch.attention.parameters == sum(p.numel() for p in layer.attention.parameters())
    assert arch.feed_forward.parameters == sum(
        p.numel() for part in (layer.intermediate, layer.output) for p in part.parameters()
    )
    assert arch.word.parameters == bert_base.bert.embeddings.word_embeddings.weight.numel() == 30_522 * 768
    assert arch.mlm_head.parameters == 592_128 + 30_522  # the decoder is the word-embedding matrix: not again
    assert arch.total() == sum(p.numel() for p in bert_base.parameters()) == 110_106_428
    assert (
        arch.attention.sizes.startswith("12 heads × 64 = 768") and "768 → 3072 → 768 (gelu)" in arch.feed_forward.sizes
    )
    assert arch.layers == 12 and arch.last_hidden.name == "Hidden state 12"  # numbered as in bertlens.layers
    assert "tied to the word embeddings" in arch.mlm_head.sizes
    words = arch.in_words()
    assert "12 encoder layers, each Self-attention (12 heads × 64 = 768" in words and "not in this" not in words


@pytest.mark.parametrize(("tied", "pooler", "layers"), [(False, True, 1), (True, False, 1), (False, False, 3)])
def test_the_architecture_adds_up_with_an_untied_decoder_no_pooler_or_one_layer(tied, pooler, layers):
    config = BertConfig(
        vocab_size=120,
        hidden_size=16,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=32,
        tie_word_embeddings=tied,
    )
    model = BertForPreTraining(config)
    arch = architecture(config, parameter_counts(model, has_pooler=pooler))
    pooler_weights = sum(p.numel() for p in model.bert.pooler.parameters())
    assert arch.total() == sum(p.numel() for p in model.parameters()) - (0 if pooler else pooler_weights)
    assert arch.pooler.present == pooler and arch.mlm_head.present
    assert ("tied to the word embeddings" in arch.mlm_head.sizes) == tied
    assert (f"{plural(layers, 'encoder layer')}, each Self-attention") in arch.in_words()


def test_an_encoder_only_checkpoint_has_its_heads_marked_missing(bundled):
    arch = bundle_architecture(bundled)
    assert [b.name for b in arch.blocks() if not b.present] == ["MLM head (fill-mask)", "NSP head (next sentence)"]
    assert arch.pooler.present and arch.layers == 6 and arch.position.sizes == "512 × 384"
    assert arch.total() == sum(p.numel() for p in bundled.model.bert.parameters())  # random heads not counted
    assert arch.in_words().count(NOT_IN_CHECKPOINT) == 2


def test_config_summary(bert_base):
    summary = config_summary(bert_base.config).set_index("setting")["value"]
    assert summary["hidden_size"] == "768" and summary["num_hidden_layers"] == "12"
    assert summary["head size"] == "64" and summary["intermediate_size"] == "3072"


def test_config_summary_head_size_is_the_models_own(bundled):
    """MiniLM has 6 layers and 12 heads of 384: its heads are 32 wide (384 / 6 = 64 would be wrong)."""
    summary = config_summary(bundled.model.config).set_index("setting")["value"]
    self_attention = bundled.model.bert.encoder.layer[0].attention.self
    assert self_attention.attention_head_size == self_attention.query.out_features // 12 == 32
    assert summary["head size"] == str(self_attention.attention_head_size)
    assert (summary["num_hidden_layers"], summary["num_attention_heads"], summary["hidden_size"]) == ("6", "12", "384")


def test_bundled_encoder_has_no_heads(bundled):
    table = bundle_parameter_counts(bundled)
    counts = counts_by_name(table)
    assert counts[("Checkpoint", "total")] == sum(p.numel() for p in bundled.model.bert.parameters()) == 22_713_216
    assert table.set_index("part").loc[["MLM head", "NSP head"], "note"].tolist() == [NOT_IN_CHECKPOINT] * 2
    named = bundle_named_parameters(bundled)
    assert len(named) == 103 and not named["name"].str.startswith("cls.").any()


def test_bundle_with_heads_lists_them(tiny_bundle):
    named = bundle_named_parameters(tiny_bundle)
    assert "cls.predictions.transform.dense.weight" in set(named["name"])
    assert "cls.seq_relationship.weight" in set(named["name"])
    assert "cls.predictions.decoder.weight" not in set(named["name"])  # tied: listed once, as the word embeddings
    total = counts_by_name(bundle_parameter_counts(tiny_bundle))[("Checkpoint", "total")]
    assert named["parameters"].sum() == total == sum(p.numel() for p in tiny_bundle.model.parameters())


def test_many_embeddings_add_up(bundled):
    analysis = analyze(bundled, "I am Sinan", "And you?")  # seed 004's example phrase, as a pair
    parts = embedding_parts(bundled, analysis)
    emb = bundled.model.bert.embeddings
    ids = list(analysis.encoding.input_ids)
    np.testing.assert_array_equal(parts.word, emb.word_embeddings.weight[ids].numpy())
    np.testing.assert_array_equal(parts.position, emb.position_embeddings.weight[: len(ids)].numpy())
    np.testing.assert_array_equal(
        parts.token_type, emb.token_type_embeddings.weight[list(analysis.encoding.token_type_ids)].numpy()
    )
    assert parts.max_abs_difference < 1e-5
    with torch.no_grad():
        module = emb(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([analysis.encoding.token_type_ids]))[0]
    np.testing.assert_allclose(parts.normalized, module.numpy(), atol=1e-5)
    norms = parts.norms()
    assert len(norms) == len(ids) and (norms["max |difference|"] < 1e-5).all()
    # The first and last word embeddings are [CLS] and [SEP]: the same for every input (seed 004).
    other = embedding_parts(bundled, analyze(bundled, "I am Matt"))
    np.testing.assert_array_equal(parts.word[0], other.word[0])


def embeddings_module_rows(bundle, encoding) -> torch.Tensor:
    """The embeddings module's own output for ``encoding`` (the vectors entering layer 0)."""
    with torch.no_grad():
        ids, types = (torch.tensor([values]) for values in (encoding.input_ids, encoding.token_type_ids))
        return bundle.model.bert.embeddings(input_ids=ids, token_type_ids=types)[0]


def test_the_same_token_in_another_sentence_has_the_same_word_row_and_differs_where_its_position_does(bundled):
    """Seed 004: "I am Sinan" against "I am Matt". [CLS], i, am and [SEP] have the same word-embedding row in both
    (a look-up); entering layer 0 they are equal where the position is ([CLS] i am), not [SEP] (5 here, 4 there)."""
    sinan, matt = (encode(bundled.tokenizer, text) for text in ("I am Sinan", "I am Matt"))
    table = same_tokens(bundled, sinan, matt)
    assert table["token"].tolist() == ["[CLS]", "i", "am", "[SEP]"]  # sin and ##an are not in "I am Matt"
    assert table["position"].tolist() == [0, 1, 2, 5] and table["position in the other"].tolist() == [0, 1, 2, 4]
    assert (table["word embedding: largest difference"] == 0).all()
    entering = table["entering layer 0: largest difference"].tolist()
    rows = [embeddings_module_rows(bundled, e) for e in (sinan, matt)]
    expected = [float((rows[0][i] - rows[1][j]).abs().max()) for i, j in ((0, 0), (1, 1), (2, 2), (5, 4))]
    np.testing.assert_allclose(entering, expected, atol=1e-5)
    assert max(entering[:3]) < 1e-6 and entering[3] > 0.01


def test_a_repeated_token_is_paired_at_its_own_place_and_a_pairs_token_type_counts(bundled):
    """ "the" is at 1 and 4 in both sentences: paired at the same place (equal), not with the other's first "the".
    In a pair, B's tokens have token type 1: "matt" at the same position in a sentence read alone still differs."""
    swapped = same_tokens(
        bundled, *(encode(bundled.tokenizer, t) for t in ("the cat and the dog", "the dog and the cat"))
    )
    the = swapped[swapped["token"] == "the"]
    assert (
        the["position in the other"].tolist() == [1, 4] and (the["entering layer 0: largest difference"] < 1e-6).all()
    )
    pair = same_tokens(bundled, encode(bundled.tokenizer, "I am", "Matt"), encode(bundled.tokenizer, "I am a Matt"))
    matt = pair[pair["token"] == "matt"].iloc[0]
    assert (matt["position"], matt["position in the other"]) == (4, 4)
    assert (matt["token type"], matt["token type in the other"]) == (1, 0)
    assert matt["entering layer 0: largest difference"] > 0.01 and matt["word embedding: largest difference"] == 0


def test_pooler_check(bundled, tiny_bundle):
    analysis = analyze(bundled, "Sinan loves a beautiful day")
    check = pooler_check(bundled, analysis)
    assert check.max_abs_difference < 1e-6
    with torch.no_grad():
        reference = bundled.model.bert(input_ids=torch.tensor([analysis.encoding.input_ids])).pooler_output[0]
    np.testing.assert_allclose(check.by_hand, reference.numpy(), atol=1e-5)
    assert pooler_check(tiny_bundle, analyze(tiny_bundle, "hello")).max_abs_difference < 1e-6
    no_pooler = replace(bundled, capabilities=replace(bundled.capabilities, has_pooler=False))
    assert pooler_check(no_pooler, analysis) is None


def test_pooler_check_reports_the_largest_difference():
    """One value off by 1 among three: the check says 1, not the mean 1/3."""
    assert PoolerCheck(by_hand=np.array([0.0, 0.0, 1.0]), pooler_output=np.zeros(3)).max_abs_difference == 1.0
    assert PoolerCheck(by_hand=np.array([0.5, -2.0]), pooler_output=np.array([0.25, 0.0])).max_abs_difference == 2.0


def test_a_one_layer_one_head_model_is_counted_in_the_singular():
    model = BertForPreTraining(random_bert_config(**{**TINY_CONFIG, "num_hidden_layers": 1, "num_attention_heads": 1}))
    components = parameter_counts(model)["component"].tolist()
    assert "the only layer" in components and not any("all 1 layers" in c for c in components)
    caps = Capabilities(
        has_mlm_head=True, has_nsp_head=True, has_pooler=True, num_layers=1, num_heads=1, hidden_size=32,
        intermediate_size=64, max_positions=512, vocab_size=30522, cased=False,
    )  # fmt: skip
    assert caps.summary().startswith("1 encoder layer × 1 attention head · hidden 32")


def test_the_module_tree_is_print_model_with_only_the_heads_the_checkpoint_has(tiny_bundle, bundled):
    assert module_tree(tiny_bundle) == repr(tiny_bundle.model)  # both heads: print(model) itself
    tree = module_tree(bundled)  # an encoder without heads is the BertModel it is
    assert tree.startswith(repr(bundled.model.bert)) and "BertForPreTraining" not in tree and "cls" not in tree


def shape_of(value) -> str:
    """An output's shape as the Outputs table writes it: a tensor's own, a tuple's as "count × (shape)"."""
    if isinstance(value, tuple):
        assert len({v.shape for v in value}) == 1
        return f"{len(value)} × {tuple(value[0].shape)}"
    return str(tuple(value.shape))


@pytest.mark.parametrize("pair", [False, True])
def test_forward_outputs_are_what_transformers_returns(tiny_pretraining_dir, tiny_bundle, pair):
    """Each row's shape and count of values equal the tensors transformers returns for the same input."""
    text, text_b = "The capital of France is [MASK].", ("It is a big city." if pair else None)
    inputs = tiny_bundle.tokenizer(text, text_b, return_tensors="pt")
    pretraining = BertForPreTraining.from_pretrained(tiny_pretraining_dir, attn_implementation="eager").eval()
    with torch.no_grad():
        base = pretraining.bert(**inputs, output_attentions=True, output_hidden_states=True)
        heads = pretraining(**inputs)
    returned = {
        "input_ids": inputs.input_ids,
        "hidden_states": base.hidden_states,
        "last_hidden_state": base.last_hidden_state,
        "attentions": base.attentions,
        "pooler_output": base.pooler_output,
        "prediction_logits": heads.prediction_logits,
        "seq_relationship_logits": heads.seq_relationship_logits,
    }
    table = forward_outputs(analyze(tiny_bundle, text, text_b), tiny_bundle.capabilities)
    assert list(table["output"]) == list(returned)
    for row in table.itertuples():
        value = returned[row.output]
        assert row.shape == shape_of(value), row.output
        assert row.values == (sum(v.numel() for v in value) if isinstance(value, tuple) else value.numel())
    # The index the table names for last_hidden_state is the one that holds it (not the layer before).
    [index] = re.findall(r"hidden_states\[(\d+)\]", table.set_index("output").loc["last_hidden_state", "holds"])
    assert torch.equal(base.hidden_states[int(index)], base.last_hidden_state)
    assert not torch.equal(base.hidden_states[int(index) - 1], base.last_hidden_state)


def test_forward_outputs_name_the_heads_a_checkpoint_lacks(bundled):
    table = forward_outputs(analyze(bundled, "Hello there."), bundled.capabilities).set_index("output")
    for head in ("prediction_logits", "seq_relationship_logits"):
        assert table.loc[head, "holds"] == NOT_IN_CHECKPOINT and pd.isna(table.loc[head, "values"])
    assert table.loc["hidden_states", "shape"] == "7 × (1, 5, 384)"  # 6 layers + the embeddings output
