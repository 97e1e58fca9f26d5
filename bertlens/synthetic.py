"""Randomly initialised BERT checkpoints over the real WordPiece vocabulary.

Used by the tests (tiny models, with and without heads) and by the benchmark (bert-base-uncased's
exact configuration: speed, memory and parameter counts do not depend on the weight values).
No download: the vocabulary comes from the bundled encoder, which uses bert-base-uncased's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from transformers import AutoTokenizer, BertConfig, BertForPreTraining, BertModel

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
