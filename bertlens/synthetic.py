"""Randomly initialised BERT checkpoints over the real WordPiece vocabulary.

Used by the tests (tiny models, with and without heads) and by the benchmark (bert-base-uncased's
exact configuration: speed, memory and parameter counts do not depend on the weight values).
No download: the vocabulary comes from the bundled encoder, which uses bert-base-uncased's.
"""

from __future__ import annotations

import json
import string
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast

import torch
import transformers
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    AlbertTokenizer,
    AutoConfig,
    AutoTokenizer,
    BertConfig,
    BertForPreTraining,
    BertModel,
    BertTokenizer,
    CamembertTokenizer,
    DistilBertTokenizer,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    PreTrainedTokenizerFast,
    RobertaTokenizer,
    XLMRobertaTokenizer,
)

from bertlens.family import FAMILIES, Family
from bertlens.models import bundled_model_path

TINY_CONFIG = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
# bert-base-uncased's config.json, so a random model of this shape has its exact parameters.
BERT_BASE_UNCASED_CONFIG = dict(
    vocab_size=30522,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    max_position_embeddings=512,
    type_vocab_size=2,
    hidden_act="gelu",
    layer_norm_eps=1e-12,
    pad_token_id=0,
)


def random_bert_config(**overrides: Any) -> BertConfig:
    return BertConfig(**{**BERT_BASE_UNCASED_CONFIG, **overrides})


def save_random_bert(folder: str | Path, config: BertConfig, with_heads: bool = True, seed: int = 0) -> Path:
    """Save a random BERT (``BertForPreTraining`` with both heads, or a bare ``BertModel``) and the real tokenizer."""
    folder = Path(folder)
    torch.manual_seed(seed)
    model = BertForPreTraining(config) if with_heads else BertModel(config)
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(bundled_model_path()).save_pretrained(folder)
    return folder


# --------------------------------------------------------------------------- BERT's family, offline
# Tiny random models of each family, each with a tokenizer of its family's kind trained here on a few hundred
# sentences with the ``tokenizers`` library, then built by the family's own transformers tokenizer class (so its
# normalizer, special tokens and pair template are the family's). Random weights: for tests only.

_SUBJECTS = "cat dog bird teacher student child river city model robot farmer doctor".split()
_ADJECTIVES = "small quick lazy bright old new quiet happy green heavy".split()
_VERBS = "sees likes reads finds follows writes remembers paints carries watches".split()
_OBJECTS = "book letter garden house song question answer window market bridge".split()
_PLACES = "Paris London Berlin Madrid Rome Tokyo".split()


def family_sentences() -> list[str]:
    """A few hundred varied English sentences to train the tokenizers on (cased, with punctuation)."""
    sentences = []
    for i in range(360):
        subject, adjective = _SUBJECTS[i % 12], _ADJECTIVES[(i * 7) % 10]
        verb, thing, place = _VERBS[(i * 3) % 10], _OBJECTS[(i * 11) % 10], _PLACES[i % 6]
        sentences.append(
            (
                f"The {adjective} {subject} {verb} a {thing}.",
                f"In {place}, my {subject} {verb} the {adjective} {thing}!",
                f"Does the {subject} know why {place} has {i} {thing}s?",
            )[i % 3]
        )
    return sentences


TokenizerFamilyKind = Literal["wordpiece", "byte-level-bpe", "unigram"]
TINY_VOCABULARY = 400
_ALPHABET = list(string.ascii_letters + string.digits + ".,!?'")  # every piece a test sentence needs, not <unk>


@cache
def _trained_vocabulary(kind: TokenizerFamilyKind) -> str:
    """A tokenizers model trained on ``family_sentences`` (its JSON, without special tokens: each family adds its own)."""
    match kind:
        case "wordpiece":
            tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
            tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
            tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
            trainer: trainers.Trainer = trainers.WordPieceTrainer(vocab_size=TINY_VOCABULARY)
        case "byte-level-bpe":
            tokenizer = Tokenizer(models.BPE())
            tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            trainer = trainers.BpeTrainer(
                vocab_size=TINY_VOCABULARY, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
            )
        case "unigram":
            tokenizer = Tokenizer(models.Unigram())
            tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
            trainer = trainers.UnigramTrainer(
                vocab_size=TINY_VOCABULARY, unk_token="<unk>", special_tokens=["<unk>"], initial_alphabet=_ALPHABET
            )
    tokenizer.train_from_iterator(family_sentences(), trainer)
    return tokenizer.to_str()


def _model_json(kind: TokenizerFamilyKind) -> dict[str, Any]:
    model: dict[str, Any] = json.loads(_trained_vocabulary(kind))["model"]
    return model


def _wordpiece(specials: list[str]) -> dict[str, int]:
    learnt = [token for token in _model_json("wordpiece")["vocab"] if token not in specials]
    return {token: i for i, token in enumerate([*specials, *learnt])}


def _unigram(first: list[str], last: list[str] = []) -> list[tuple[str, float]]:  # noqa: B006  # never mutated
    specials = {*first, *last}
    learnt = [(str(piece), float(score)) for piece, score in _model_json("unigram")["vocab"] if piece not in specials]
    return [(token, 0.0) for token in first] + learnt + [(token, 0.0) for token in last]


def _byte_level(specials: list[str], size: int | None = None) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The trained byte-level BPE under ``specials``; with ``size``, padded to that many entries with placeholders no
    merge ever produces (so every id a full-size MLM head scores has a token, and no text is split differently)."""
    model = _model_json("byte-level-bpe")
    learnt = sorted((token for token in model["vocab"] if token not in specials), key=model["vocab"].get)
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    unused = [f"<unused{i}>" for i in range(max(0, (size or 0) - len(specials) - len(learnt)))]
    return {token: i for i, token in enumerate([*specials, *learnt, *unused])}, merges


def _modernbert_tokenizer() -> PreTrainedTokenizerBase:
    """ModernBERT's tokenizer is a byte-level BPE (OLMo's) with BERT's bracketed special tokens, no token types."""
    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    vocab, merges = _byte_level(specials)
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]  # unannotated in transformers
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        mask_token=AddedToken("[MASK]", lstrip=True, special=True),
        model_input_names=["input_ids", "attention_mask"],
    )


def family_tokenizer(family: Family, vocab_size: int | None = None) -> PreTrainedTokenizerBase:
    """A small tokenizer of ``family``'s kind and special tokens, built offline; RoBERTa's padded to ``vocab_size``
    entries when given (unused placeholders: a base-size model's vocabulary with the small tokenizer's splits)."""
    bert_specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    roberta_specials = ["<s>", "<pad>", "</s>", "<unk>"]
    match family:
        case "bert" | "electra":
            return BertTokenizer(vocab=_wordpiece(bert_specials))
        case "distilbert":
            return DistilBertTokenizer(vocab=_wordpiece(bert_specials))
        case "roberta":
            vocab, merges = _byte_level([*roberta_specials, "<mask>"], vocab_size)
            # transformers annotates merges as strings; the tokenizers backend takes (left, right) pairs
            return RobertaTokenizer(vocab=vocab, merges=merges)  # type: ignore[arg-type]
        case "albert":
            return AlbertTokenizer(vocab=_unigram(["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]))
        case "xlm-roberta":
            return XLMRobertaTokenizer(vocab=_unigram(roberta_specials, ["<mask>"]))
        case "camembert":
            first = ["<s>NOTUSED", "<pad>", "</s>NOTUSED", "<unk>", "<unk>NOTUSED", "<s>", "</s>"]
            return CamembertTokenizer(vocab=_unigram(first, ["<mask>"]))
        case "modernbert":
            return _modernbert_tokenizer()
    raise ValueError(family)


TINY_FAMILY_SHAPE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


def random_family_config(family: Family, tokenizer: PreTrainedTokenizerBase, **overrides: Any) -> PretrainedConfig:
    """A tiny config of ``family`` over ``tokenizer``'s vocabulary (ALBERT and ELECTRA factorise their embeddings,
    ALBERT shares one layer; ModernBERT attends locally, within 4 tokens, in two layers of three)."""
    ids = dict(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
    )
    shape: dict[str, Any] = {**TINY_FAMILY_SHAPE, **ids, "max_position_embeddings": 64}
    match family:
        case "distilbert":
            settings: dict[str, Any] = dict(
                vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, dim=32, n_layers=2, n_heads=4,
                hidden_dim=64, max_position_embeddings=64,
            )  # fmt: skip
        case "roberta" | "xlm-roberta" | "camembert":
            settings = {**shape, "max_position_embeddings": 66, "type_vocab_size": 1}  # positions start at pad + 1
        case "albert" | "electra":
            settings = {**shape, "embedding_size": 16}
        case "modernbert":
            settings = {
                **shape, "num_hidden_layers": 3, "global_attn_every_n_layers": 3, "local_attention": 4,
                "cls_token_id": tokenizer.cls_token_id, "sep_token_id": tokenizer.sep_token_id,
            }  # fmt: skip
        case _:
            settings = shape
    return AutoConfig.for_model(family, **{**settings, **overrides})


# roberta-base's config.json: bert-base's shape with its own vocabulary, positions (offset past the padding id) and a
# single token type; the ids are the small offline tokenizer's, numbered as roberta-base's (<s> 0, <pad> 1, </s> 2).
# The real vocab_size, so the MLM head's cost is honest though the tokenizer is small.
ROBERTA_BASE_CONFIG = {
    **BERT_BASE_UNCASED_CONFIG,
    **dict(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5),
    **dict(pad_token_id=1, bos_token_id=0, eos_token_id=2),
}
BASE_CONFIGS: dict[str, dict[str, Any]] = {"bert": BERT_BASE_UNCASED_CONFIG, "roberta": ROBERTA_BASE_CONFIG}


def save_random_base_model(folder: str | Path, family: str) -> Path:
    """A random model with the base-size config of ``family`` (a ``BASE_CONFIGS`` key) for the benchmarks: BERT with
    the real WordPiece tokenizer; the others with their family's small offline tokenizer (``family_tokenizer``, its
    vocabulary padded to the config's with unused placeholders), so a text's token count differs from the real
    checkpoint's while the model's shape and cost are its own."""
    if family == "bert":
        return save_random_bert(folder, random_bert_config())
    return save_random_family_model(folder, cast("Family", family), **BASE_CONFIGS[family])


def save_random_family_model(
    folder: str | Path,
    family: Family,
    model_class: type[PreTrainedModel] | None = None,
    seed: int = 0,
    **overrides: Any,
) -> Path:
    """Save a tiny random ``family`` model (its family's pre-training class unless ``model_class`` says otherwise,
    e.g. the bare encoder, or ELECTRA's generator) with a tokenizer of its kind."""
    folder = Path(folder)
    tokenizer = family_tokenizer(family, overrides.get("vocab_size"))
    config = random_family_config(family, tokenizer, **overrides)
    torch.manual_seed(seed)
    spec = FAMILIES[family]
    cls = model_class or cast("type[PreTrainedModel]", getattr(transformers, spec.pretraining_class))
    cls(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
