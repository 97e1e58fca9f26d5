"""BERT and its family: what a checkpoint has, and one way to run any of them.

``describe_checkpoint`` reads a loaded checkpoint (its config, tokenizer and the weights transformers
found) into a ``ModelDescription``: which family it is, how its tokenizer splits words, whether it
reads token types, how it encodes positions, how it attends, which pre-training heads it really
has (a head whose weights are missing is not a head), shared layers, factorised embeddings, pooler.
Every part it lacks comes with a short reason the UI can show.

``encoder_pass`` and the ``*_logits`` functions are the uniform calls the shared forward pass makes,
whatever the family: hidden states, attentions, and the heads the description lists.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

import torch

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

Family = Literal["bert", "distilbert", "roberta", "xlm-roberta", "camembert", "albert", "electra", "modernbert"]
Head = Literal["MLM", "NSP", "SOP", "RTD"]
TokenizerKind = Literal["WordPiece", "byte-level BPE", "SentencePiece Unigram", "SentencePiece BPE", "other"]
PositionScheme = Literal["learned absolute", "fixed sinusoidal", "rotary"]
AttentionPattern = Literal["full", "local and global"]

HEAD_NAMES: Mapping[Head, str] = {
    "MLM": "masked language modelling",
    "NSP": "next sentence prediction",
    "SOP": "sentence-order prediction",
    "RTD": "replaced-token detection",
}


@dataclass(frozen=True)
class FamilySpec:
    """How transformers builds one family: the class holding its pre-training heads and where each part is."""

    family: Family
    name: str  # as papers write it
    paper: str  # who introduced it
    pretraining_class: str  # transformers class with every head the family was pre-trained with
    base: str  # attribute of the encoder (the bare model) in that class
    heads: Mapping[Head, tuple[str, ...]]  # head -> its modules in the pre-training class (all must be loaded)
    pooler: str | None = None  # module path of the pooler, for the families that have one
    generator_class: str | None = None  # ELECTRA: the generator (an MLM) is a checkpoint of another class


FAMILIES: Mapping[str, FamilySpec] = {  # by config.model_type
    spec.family: spec
    for spec in (
        FamilySpec("bert", "BERT", "Devlin et al. 2019", "BertForPreTraining", "bert",
                   {"MLM": ("cls.predictions",), "NSP": ("cls.seq_relationship",)}, pooler="bert.pooler"),
        FamilySpec("distilbert", "DistilBERT", "Sanh et al. 2019", "DistilBertForMaskedLM", "distilbert",
                   {"MLM": ("vocab_transform", "vocab_layer_norm", "vocab_projector")}),
        FamilySpec("roberta", "RoBERTa", "Liu et al. 2019", "RobertaForMaskedLM", "roberta", {"MLM": ("lm_head",)}),
        FamilySpec("xlm-roberta", "XLM-RoBERTa", "Conneau et al. 2020", "XLMRobertaForMaskedLM", "roberta",
                   {"MLM": ("lm_head",)}),
        FamilySpec("camembert", "CamemBERT", "Martin et al. 2020", "CamembertForMaskedLM", "roberta",
                   {"MLM": ("lm_head",)}),
        FamilySpec("albert", "ALBERT", "Lan et al. 2020", "AlbertForPreTraining", "albert",
                   {"MLM": ("predictions",), "SOP": ("sop_classifier",)}, pooler="albert.pooler"),
        FamilySpec("electra", "ELECTRA", "Clark et al. 2020", "ElectraForPreTraining", "electra",
                   {"RTD": ("discriminator_predictions",), "MLM": ("generator_predictions", "generator_lm_head")},
                   generator_class="ElectraForMaskedLM"),
        FamilySpec("modernbert", "ModernBERT", "Warner et al. 2024", "ModernBertForMaskedLM", "model",
                   {"MLM": ("head", "decoder")}),
    )
}  # fmt: skip

# How each family other than BERT learned to fill masks, beside BERT's recipe (15 % chosen, 80/10/10) that the
# fill-mask page draws on the student's sentence: what the family's paper changed.
MASKING_RECIPES: Mapping[str, str] = {
    "distilbert": "distilled from BERT while filling masks, with masks drawn afresh each time a sentence is seen "
    "and no next-sentence task (Sanh et al. 2019)",
    "roberta": "the same 15 % and 80/10/10, but drawn afresh each time a sentence is seen (dynamic masking), on "
    "longer texts with no next-sentence task (Liu et al. 2019)",
    "xlm-roberta": "RoBERTa's masking on text in 100 languages (Conneau et al. 2020)",
    "camembert": "RoBERTa's masking on French text (Martin et al. 2020)",
    "albert": "masks over spans of up to three words (n-gram masking), beside its sentence-order task (Lan et al. 2020)",
    "electra": "a small generator fills the masks, and this discriminator learns which tokens of the result were "
    "replaced (Clark et al. 2020)",
    "modernbert": "30 % of the tokens chosen instead of 15 %, and no next-sentence task (Warner et al. 2024)",
}
assert set(MASKING_RECIPES) == set(FAMILIES) - {"bert"}

# What a masked-word loss was of each family's pre-training loss (the fill-mask page's true-word check explains it).
MLM_LOSS_SHARE: Mapping[str, str] = {
    "bert": "one part of BERT's pre-training loss: pre-training minimised its sum with the next-sentence-prediction "
    "loss (Devlin et al., 2019)",
    "albert": "one part of ALBERT's pre-training loss, summed with its sentence-order-prediction loss (Lan et al. 2020)",
    "distilbert": "one part of DistilBERT's training loss, beside matching BERT's own guesses (distillation) and its "
    "hidden states (Sanh et al. 2019)",
    "roberta": "all of RoBERTa's pre-training loss: it has no sentence-pair task (Liu et al. 2019)",
    "xlm-roberta": "all of XLM-RoBERTa's pre-training loss: it has no sentence-pair task (Conneau et al. 2020)",
    "camembert": "all of CamemBERT's pre-training loss: it has no sentence-pair task (Martin et al. 2020)",
    "electra": "the loss of ELECTRA's small generator; the discriminator learned from whether each token was replaced "
    "(Clark et al. 2020)",
    "modernbert": "all of ModernBERT's pre-training loss: it has no sentence-pair task (Warner et al. 2024)",
}
assert set(MLM_LOSS_SHARE) == set(FAMILIES)

# Why a family never had a part (shown instead of a number); a checkpoint that dropped its head gets ``DROPPED``.
_ROBERTA_LACKS = {
    "NSP": "RoBERTa dropped next sentence prediction: trained on long runs of full sentences without it, it matched "
    "or beat BERT (Liu et al. 2019).",
    "token types": "RoBERTa has a single token type: sentences are told apart by </s></s> only.",
    "pooler": "RoBERTa has no sentence-level objective, so no trained pooler.",
}
NEVER_HAD: Mapping[Family, Mapping[str, str]] = {
    "roberta": _ROBERTA_LACKS,
    "xlm-roberta": {
        **_ROBERTA_LACKS,
        "NSP": "XLM-RoBERTa is trained like RoBERTa, masked language modelling only, in 100 languages "
        "(Conneau et al. 2020).",
    },
    "camembert": {**_ROBERTA_LACKS, "NSP": "CamemBERT is a French RoBERTa: masked language modelling only "
                  "(Martin et al. 2020)."},
    "distilbert": {
        "NSP": "DistilBERT was distilled from BERT on masked language modelling alone; it dropped next sentence "
        "prediction, token types and the pooler (Sanh et al. 2019).",
        "token types": "DistilBERT has no token-type (segment) embeddings: sentence A and B are told apart by the "
        "separator token only.",
        "pooler": "DistilBERT has no pooler: without next sentence prediction nothing reads a pooled [CLS].",
    },
    "albert": {
        "NSP": "ALBERT replaced next sentence prediction with sentence-order prediction: are A and B in their "
        "original order or swapped? NSP was too easy, mostly telling topics apart (Lan et al. 2020).",
    },
    "electra": {
        "NSP": "ELECTRA is pre-trained on replaced-token detection only (Clark et al. 2020).",
        "MLM": "ELECTRA's discriminator learnt to spot replaced tokens (replaced-token detection), not to fill "
        "masks; the small generator that filled them is a separate checkpoint (Clark et al. 2020).",
        "pooler": "ELECTRA has no pooler: its objective is per token.",
    },
    "modernbert": {
        "NSP": "ModernBERT is trained on masked language modelling only (Warner et al. 2024).",
        "token types": "ModernBERT has no token-type embeddings: sentences are told apart by the separator only.",
        "pooler": "ModernBERT has no pooler: fine-tuning pools [CLS] or the mean of the tokens.",
    },
}  # fmt: skip
ELECTRA_GENERATOR = (
    "This is ELECTRA's generator, the small masked language model that proposed replacements in pre-training; "
    "replaced-token detection is the discriminator's head, a checkpoint of its own (Clark et al. 2020)."
)
DROPPED = (
    "This checkpoint ships the encoder without its {part}: predictions from it would come from random "
    "weights, so none are shown."
)


@dataclass(frozen=True)
class MissingPart:
    part: str  # "NSP", "MLM", "token types", "pooler" …
    reason: str  # one or two sentences a student can read


@dataclass(frozen=True)
class TokenizerScheme:
    kind: TokenizerKind
    marker: str | None  # "##" (WordPiece), "Ġ" (byte-level BPE), "▁" (SentencePiece); None when unknown
    marker_starts_word: bool  # Ġ and ▁ mark a piece that starts a word; ## a piece that continues one


@dataclass(frozen=True)
class ModelDescription:
    """What one checkpoint has. Every page reads it and shows no number from a part it lacks."""

    family: Family
    family_name: str  # "RoBERTa"
    model_type: str  # config.model_type ("xlm-roberta")
    tokenizer: TokenizerScheme
    cls_token: str  # "[CLS]" or "<s>"
    sep_token: str  # "[SEP]" or "</s>"
    mask_token: str  # "[MASK]" or "<mask>"
    pad_token: str
    cased: bool
    token_types: bool  # has segment (token-type) embeddings telling sentence A from B
    positions: PositionScheme
    attention: AttentionPattern
    local_window: int | None  # ModernBERT's local_attention: a local layer sees local_window // 2 tokens either side
    global_layers: tuple[int, ...]  # layers (from 0) that attend to every token
    heads: tuple[Head, ...]  # pre-training heads whose weights the checkpoint has
    pooler: bool  # the pooled-[CLS] layer, with the checkpoint's weights
    num_layers: int
    distinct_layers: int  # sets of layer weights (ALBERT shares one set across all layers)
    num_heads: int
    hidden_size: int
    embedding_size: int  # ALBERT/ELECTRA factorise: embeddings this wide, projected up to hidden_size
    intermediate_size: int
    max_positions: int  # the longest input, in tokens
    vocab_size: int
    missing: tuple[MissingPart, ...]  # every part a BERT page might look for, with why it is not there

    @property
    def shares_layers(self) -> bool:
        return self.distinct_layers < self.num_layers

    @property
    def factorised_embeddings(self) -> bool:
        return self.embedding_size != self.hidden_size

    def has(self, head: Head) -> bool:
        return head in self.heads

    def why_missing(self, part: str) -> str | None:
        """The reason ``part`` is missing, or None when the checkpoint has it."""
        return next((m.reason for m in self.missing if m.part == part), None)


def layer_scope(description: ModelDescription, layer: int) -> str | None:
    """What encoder layer ``layer`` (from 0) lets a token attend to, for a model with local layers (ModernBERT);
    None where every layer attends to every token."""
    if description.attention != "local and global" or description.local_window is None:
        return None
    if layer in description.global_layers:
        return "a global layer: every token attends to every token"
    return (
        f"a local layer: each token attends only to the tokens within {description.local_window // 2} positions "
        "of it (a sliding window); the weights outside it are 0"
    )


def in_model_tokens(markdown: str, description: ModelDescription) -> str:
    """Markdown written with BERT's special tokens ("`[MASK]`", "[CLS]"), with the model's own where they differ, as
    code spans ("`<mask>`", "`<s>`": bare, Markdown would take them for HTML)."""
    own = {
        "[MASK]": description.mask_token,
        "[CLS]": description.cls_token,
        "[SEP]": description.sep_token,
        "[PAD]": description.pad_token,
    }
    for bert, token in own.items():
        if token != bert:
            markdown = markdown.replace(f"`{bert}`", bert).replace(bert, f"`{token}`")
    return markdown


def family_spec(config: PretrainedConfig) -> FamilySpec | None:
    """The family of a config (None: not an encoder of BERT's family)."""
    return FAMILIES.get(str(config.model_type))


def tokenizer_scheme(tokenizer: PreTrainedTokenizerBase) -> TokenizerScheme:
    """How the tokenizer splits words, from its backend's own description (tokenizers' JSON)."""
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    model = spec.get("model") or {}
    pre = spec.get("pre_tokenizer") or {}
    steps = {step.get("type") for step in pre.get("pretokenizers", [pre])}
    if model.get("type") == "WordPiece":
        return TokenizerScheme("WordPiece", model.get("continuing_subword_prefix", "##"), False)
    if model.get("type") == "BPE" and "ByteLevel" in steps:
        return TokenizerScheme("byte-level BPE", "Ġ", True)
    if "Metaspace" in steps and model.get("type") in ("Unigram", "BPE"):
        metaspace = next(step for step in pre.get("pretokenizers", [pre]) if step.get("type") == "Metaspace")
        kind: TokenizerKind = "SentencePiece Unigram" if model.get("type") == "Unigram" else "SentencePiece BPE"
        return TokenizerScheme(kind, metaspace.get("replacement", "▁"), True)
    return TokenizerScheme("other", None, False)


_schemes: weakref.WeakKeyDictionary[PreTrainedTokenizerBase, TokenizerScheme] = weakref.WeakKeyDictionary()


def scheme_of(tokenizer: PreTrainedTokenizerBase) -> TokenizerScheme:
    """``tokenizer_scheme``, read once per tokenizer (its backend's JSON is the whole vocabulary); a tokenizer
    without a backend (a slow one) is taken for BERT's WordPiece, as the code always did."""
    if tokenizer not in _schemes:
        has_backend = getattr(tokenizer, "backend_tokenizer", None) is not None
        _schemes[tokenizer] = tokenizer_scheme(tokenizer) if has_backend else TokenizerScheme("WordPiece", "##", False)
    return _schemes[tokenizer]


def is_cased(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Behavioural: a cased tokenizer keeps "Hello" and "hello" apart."""
    return tokenizer.tokenize("Hello") != tokenizer.tokenize("hello")


def _module_keys(model: PreTrainedModel, path: str) -> set[str] | None:
    """The parameter names under ``path`` (None: the loaded class has no such module)."""
    try:
        module = model.get_submodule(path)
    except AttributeError:
        return None
    if module is None:
        return None
    return {f"{path}.{name}" for name, _ in module.named_parameters()}


def _from_checkpoint(model: PreTrainedModel, paths: tuple[str, ...], missing_keys: set[str]) -> bool:
    """Every module in ``paths`` exists and none of its weights was missing from the checkpoint."""
    found = [_module_keys(model, path) for path in paths]
    return all(keys is not None and not (keys & missing_keys) for keys in found)


def _present_heads(spec: FamilySpec, model: PreTrainedModel, missing_keys: set[str]) -> tuple[Head, ...]:
    return tuple(head for head, paths in spec.heads.items() if _from_checkpoint(model, paths, missing_keys))


def _reason(spec: FamilySpec, part: str) -> str | None:
    """Why the family never had ``part`` (None: it normally has it)."""
    return NEVER_HAD.get(spec.family, {}).get(part)


def _missing_parts(
    spec: FamilySpec, heads: tuple[Head, ...], pooler: bool, token_types: bool
) -> tuple[MissingPart, ...]:
    missing = []
    for part in ("MLM", "NSP", *(h for h in spec.heads if h not in ("MLM", "NSP"))):
        if part in heads:
            continue
        never = ELECTRA_GENERATOR if (part == "RTD" and "MLM" in heads) else _reason(spec, part)
        name = f"{HEAD_NAMES[part]} head ({part})"
        missing.append(MissingPart(part, never or DROPPED.format(part=name)))
    if not token_types:
        missing.append(MissingPart("token types", _reason(spec, "token types") or "No token-type embeddings."))
    if not pooler:
        missing.append(MissingPart("pooler", _reason(spec, "pooler") or DROPPED.format(part="pooler")))
    return tuple(missing)


def _positions(config: PretrainedConfig) -> PositionScheme:
    if getattr(config, "rope_parameters", None) is not None or str(config.model_type) == "modernbert":
        return "rotary"
    return "fixed sinusoidal" if getattr(config, "sinusoidal_pos_embds", False) else "learned absolute"


def _position_offset(spec: FamilySpec, config: PretrainedConfig) -> int:
    """RoBERTa's positions start after the padding id (roberta-base: 514 position embeddings, 512 tokens)."""
    return int(config.pad_token_id) + 1 if spec.base == "roberta" else 0


def _attention(config: PretrainedConfig) -> tuple[AttentionPattern, int | None, tuple[int, ...]]:
    layer_types = list(getattr(config, "layer_types", None) or ())
    if "sliding_attention" not in layer_types:
        return "full", None, tuple(range(config.num_hidden_layers))
    full = tuple(i for i, kind in enumerate(layer_types) if kind == "full_attention")
    return "local and global", int(config.local_attention), full


def describe_checkpoint(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, missing_keys: set[str]
) -> ModelDescription:
    """The description of a loaded checkpoint: ``model`` as loaded (its family's pre-training class) and
    the ``missing_keys`` transformers reported, which it filled with random weights."""
    config = model.config
    spec = family_spec(config)
    if spec is None:
        raise ValueError(f"{config.model_type!r} is not a model of BERT's family")
    heads = _present_heads(spec, model, missing_keys)
    pooler = spec.pooler is not None and _from_checkpoint(model, (spec.pooler,), missing_keys)
    token_types = int(getattr(config, "type_vocab_size", 0) or 0) >= 2
    attention, window, global_layers = _attention(config)
    hidden = int(config.hidden_size)
    groups = getattr(config, "num_hidden_groups", None)
    layers = int(config.num_hidden_layers)
    return ModelDescription(
        family=spec.family,
        family_name=spec.name,
        model_type=str(config.model_type),
        tokenizer=tokenizer_scheme(tokenizer),
        cls_token=str(tokenizer.cls_token),
        sep_token=str(tokenizer.sep_token),
        mask_token=str(tokenizer.mask_token),
        pad_token=str(tokenizer.pad_token),
        cased=is_cased(tokenizer),
        token_types=token_types,
        positions=_positions(config),
        attention=attention,
        local_window=window,
        global_layers=global_layers,
        heads=heads,
        pooler=pooler,
        num_layers=layers,
        distinct_layers=int(groups) * int(getattr(config, "inner_group_num", 1)) if groups else layers,
        num_heads=int(config.num_attention_heads),
        hidden_size=hidden,
        embedding_size=int(getattr(config, "embedding_size", hidden) or hidden),
        intermediate_size=int(getattr(config, "intermediate_size", None) or getattr(config, "hidden_dim", None) or 0),
        max_positions=int(getattr(config, "max_position_embeddings", 0) or 0) - _position_offset(spec, config),
        vocab_size=int(getattr(config, "vocab_size", 0) or 0),
        missing=_missing_parts(spec, heads, pooler, token_types),
    )


def optional_key_prefixes(spec: FamilySpec) -> tuple[str, ...]:
    """Weights a checkpoint may lack (its heads and pooler); any other missing weight is a broken checkpoint."""
    parts = [path for paths in spec.heads.values() for path in paths] + ([spec.pooler] if spec.pooler else [])
    return tuple(f"{part}." for part in parts)


# --------------------------------------------------------------------------- the uniform calls


def encoder_of(model: PreTrainedModel) -> PreTrainedModel:
    """The bare encoder inside a pre-training class (``model.bert``, ``model.roberta``, ``model.model`` …)."""
    spec = family_spec(model.config)
    assert spec is not None
    return cast("PreTrainedModel", getattr(model, spec.base))


def encoder_pass(
    model: PreTrainedModel,
    description: ModelDescription,
    batch: Mapping[str, torch.Tensor],
    attentions: bool = True,
    hidden_states: bool = True,
) -> Any:
    """The encoder on a padded batch (``input_ids``, ``attention_mask``, ``token_type_ids``), with every layer's
    hidden states and attentions unless told otherwise; token types are passed only to a model that has them."""
    inputs = {name: value for name, value in batch.items() if name != "token_type_ids" or description.token_types}
    return encoder_of(model)(
        **inputs, output_attentions=attentions, output_hidden_states=hidden_states, return_dict=True
    )


def mlm_logits(model: PreTrainedModel, hidden: torch.Tensor) -> torch.Tensor:
    """The MLM head's scores over the vocabulary for final hidden states ``hidden`` (…, hidden_size)."""
    family = cast("Any", model)
    match family.config.model_type:
        case "bert":
            return cast("torch.Tensor", family.cls.predictions(hidden))
        case "distilbert":
            transformed = family.vocab_layer_norm(family.activation(family.vocab_transform(hidden)))
            return cast("torch.Tensor", family.vocab_projector(transformed))
        case "roberta" | "xlm-roberta" | "camembert":
            return cast("torch.Tensor", family.lm_head(hidden))
        case "albert":
            return cast("torch.Tensor", family.predictions(hidden))
        case "electra":
            return cast("torch.Tensor", family.generator_lm_head(family.generator_predictions(hidden)))
        case "modernbert":
            return cast("torch.Tensor", family.decoder(family.head(hidden)))
    raise ValueError(f"no MLM head for {family.config.model_type!r}")


def pair_head(description: ModelDescription) -> Literal["NSP", "SOP"] | None:
    """The sentence-pair head the checkpoint can predict with (it reads the pooled [CLS]: pooler and head)."""
    if not description.pooler:
        return None
    return "NSP" if description.has("NSP") else "SOP" if description.has("SOP") else None


def sentence_logits(model: PreTrainedModel, pooled: torch.Tensor) -> torch.Tensor:
    """The sentence-pair head on the pooled [CLS]: NSP (0 = IsNext, 1 = NotNext) for BERT, SOP (0 = in order,
    1 = swapped) for ALBERT."""
    family = cast("Any", model)
    head = family.cls.seq_relationship if family.config.model_type == "bert" else family.sop_classifier
    return cast("torch.Tensor", head(pooled))


def replaced_logits(model: PreTrainedModel, hidden: torch.Tensor) -> torch.Tensor:
    """ELECTRA's discriminator: one score per token, above 0 for "replaced" (a sigmoid gives the probability)."""
    return cast("torch.Tensor", cast("Any", model).discriminator_predictions(hidden))


# --------------------------------------------------------------------------- parts of one family only


class NotInThisFamily(ValueError):
    """A view needs a part this checkpoint's family does not have; the message says why, for the page."""


@dataclass(frozen=True)
class AttentionProjections:
    """One layer's separate query, key and value projections (BERT's, and its family's that keep them)."""

    query: torch.nn.Linear
    key: torch.nn.Linear
    value: torch.nn.Linear
    head_size: int


FUSED_QKV = (
    "ModernBERT computes query, key and value in one fused projection (Wqkv) of the normalised layer input and "
    "then rotates query and key by their positions (rotary embeddings): this step-by-step view follows BERT's "
    "separate projections only."
)
NO_POSITION_TABLE = (
    "{name} has no table of position vectors: each head rotates its query and key vectors by an angle that "
    "grows with the position (rotary position embeddings, Su et al. 2021), so position lives in the attention "
    "scores, not in the input vectors."
)


def attention_projections(model: PreTrainedModel, layer: int) -> AttentionProjections:
    """The query, key and value projections encoder layer ``layer`` (from 0) applies to ``hidden_states[layer]``.

    ALBERT's layers share weights: layer ``layer`` uses its group's (``NotInThisFamily`` for several layers
    per group, which no released ALBERT has). ModernBERT fuses the three: ``NotInThisFamily``."""
    config = model.config
    encoder = cast("Any", encoder_of(model))
    match config.model_type:
        case "distilbert":
            attention = encoder.transformer.layer[layer].attention
            return AttentionProjections(
                attention.q_lin, attention.k_lin, attention.v_lin, attention.attention_head_size
            )
        case "albert":
            if int(config.inner_group_num) != 1:
                raise NotInThisFamily("This ALBERT runs several layers per shared group: the view needs one.")
            group = int(layer / (config.num_hidden_layers / config.num_hidden_groups))  # as AlbertTransformer picks it
            attention = encoder.encoder.albert_layer_groups[group].albert_layers[0].attention
        case "modernbert":
            raise NotInThisFamily(FUSED_QKV)
        case _:  # BERT, the RoBERTa family, ELECTRA
            attention = encoder.encoder.layer[layer].attention.self
    return AttentionProjections(attention.query, attention.key, attention.value, attention.attention_head_size)


def position_table(model: PreTrainedModel, description: ModelDescription) -> tuple[torch.Tensor, int]:
    """The position vectors added to the input (learned, or DistilBERT's fixed sinusoidal ones) and the row of the
    first token's position (RoBERTa's family starts after the padding id). ``NotInThisFamily`` under rotary."""
    if description.positions == "rotary":
        raise NotInThisFamily(NO_POSITION_TABLE.format(name=description.family_name))
    spec = family_spec(model.config)
    assert spec is not None
    table = cast("Any", encoder_of(model)).embeddings.position_embeddings.weight
    return cast("torch.Tensor", table), _position_offset(spec, model.config)


def token_type_table(model: PreTrainedModel, description: ModelDescription) -> torch.Tensor | None:
    """The token-type (segment) vectors, for a model that has them (None otherwise)."""
    if not description.token_types:
        return None
    return cast("torch.Tensor", cast("Any", encoder_of(model)).embeddings.token_type_embeddings.weight)
