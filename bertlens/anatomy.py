"""Where BERT's parameters are, and two live checks: the embeddings sum and the pooler.

BERT's table (``parameter_counts``) is the seed notebooks'; every other member of the family gets the same
columns from ``family_parameter_counts``, which sorts each of the model's own parameters into one row (ALBERT's
shared layer once, its factorised embeddings with their projection, ModernBERT's gated MLP and final norm).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
import torch
from torch import nn

from bertlens.analysis import Analysis, Encoding
from bertlens.family import (
    HEAD_NAMES,
    NO_POSITION_TABLE,
    Head,
    ModelDescription,
    NotInThisFamily,
    encoder_of,
    family_spec,
)
from bertlens.models import AnyBundle, Capabilities
from bertlens.wording import plural

if TYPE_CHECKING:
    from transformers import BertForPreTraining, BertModel, PretrainedConfig
    from transformers.models.bert.modeling_bert import BertLayer, BertPreTrainingHeads

NOT_IN_CHECKPOINT = "not in this checkpoint"

CONFIG_FIELDS = (
    ("vocab_size", "WordPiece vocabulary entries"),
    ("hidden_size", "length of every token vector"),
    ("num_hidden_layers", "encoder layers stacked"),
    ("num_attention_heads", "attention heads per layer"),
    ("intermediate_size", "width of each layer's feed-forward block"),
    ("hidden_act", "feed-forward activation"),
    ("max_position_embeddings", "longest input, in tokens"),
    ("type_vocab_size", "segment (token type) embeddings: sentence A and B"),
    ("layer_norm_eps", "LayerNorm epsilon"),
    ("hidden_dropout_prob", "dropout while training (off here: eval mode)"),
    ("attention_probs_dropout_prob", "attention dropout while training"),
)


def config_summary(config: PretrainedConfig) -> pd.DataFrame:
    rows = [
        {"setting": name, "value": str(getattr(config, name, "—")), "meaning": meaning}
        for name, meaning in CONFIG_FIELDS
    ]
    head_size = config.hidden_size // config.num_attention_heads
    rows.insert(4, {"setting": "head size", "value": str(head_size), "meaning": "hidden_size / num_attention_heads"})
    return pd.DataFrame(rows)


def count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def parameter_counts(
    model: BertModel | BertForPreTraining, has_pooler: bool = True, has_mlm_head: bool = True, has_nsp_head: bool = True
) -> pd.DataFrame:
    """Parameters by component (a ``BertModel`` or ``BertForPreTraining``).

    Parts the checkpoint lacks (``has_*`` False, or no such module) have no count and say so.
    The MLM decoder weight is the word-embedding matrix itself (tied): counted once, under embeddings.
    Rows: part, component, parameters (None when absent), note, whether the row is one of the
    pieces that add up to the checkpoint total (the others are subtotals), its share of that total and of the base
    encoder (blank for the heads); the last row is the checkpoint's total.
    """
    # transformers is imported for types only: its lazy top-level names can fail to import from concurrent threads.
    bert = cast("BertModel", getattr(model, "bert", model))
    heads = cast("BertPreTrainingHeads | None", getattr(model, "cls", None))
    emb, layers = bert.embeddings, bert.encoder.layer
    layer = cast("BertLayer", layers[0])  # every layer has the same shape
    rows: list[tuple[str, str, int | None, str]] = [
        ("Embeddings", "word embeddings", count(emb.word_embeddings), "vocab_size × hidden_size"),
        ("Embeddings", "position embeddings", count(emb.position_embeddings), "max_position_embeddings × hidden_size"),
        ("Embeddings", "token type embeddings", count(emb.token_type_embeddings), "type_vocab_size × hidden_size"),
        ("Embeddings", "LayerNorm", count(emb.LayerNorm), "scale and shift"),
        ("Embeddings", "all embeddings", count(emb), ""),
        ("Encoder layer 0", "attention", count(layer.attention), "query, key, value, output projection, LayerNorm"),
        ("Encoder layer 0", "intermediate", count(layer.intermediate), "feed-forward up-projection"),
        ("Encoder layer 0", "output", count(layer.output), "feed-forward down-projection, LayerNorm"),
        ("Encoder layer 0", "one layer", count(layer), "every layer has the same shape"),
        ("Encoder", "the only layer" if len(layers) == 1 else f"all {len(layers)} layers", count(bert.encoder), ""),
    ]
    pooler = count(bert.pooler) if has_pooler and bert.pooler is not None else None
    rows.append(("Pooler", "dense + tanh on [CLS]", pooler, "" if pooler is not None else NOT_IN_CHECKPOINT))
    base = count(bert) - (count(bert.pooler) if bert.pooler is not None and pooler is None else 0)
    rows.append(("Base encoder", "total", base, "embeddings + encoder + pooler"))

    mlm = heads.predictions if heads is not None and has_mlm_head else None
    if mlm is not None:
        tied = mlm.decoder.weight is emb.word_embeddings.weight
        shared = (emb.word_embeddings.weight, mlm.bias)  # counted elsewhere when the decoder uses them
        own = [p for p in mlm.decoder.parameters() if not any(p is s for s in shared)]
        rows += [
            ("MLM head", "transform (dense + LayerNorm)", count(mlm.transform), ""),
            ("MLM head", "output bias", mlm.bias.numel(), "one per vocabulary entry"),
            (
                "MLM head",
                "decoder weight",
                sum(p.numel() for p in own),
                "tied to the word embeddings: the same matrix, counted once"
                if tied
                else "its own matrix" + (" and bias" if len(own) > 1 else ""),
            ),
        ]
    else:
        rows.append(("MLM head", "fill-mask head", None, NOT_IN_CHECKPOINT))
    nsp = heads.seq_relationship if heads is not None and has_nsp_head else None
    if nsp is not None:
        rows.append(("NSP head", "is-next classifier", count(nsp), "IsNext / NotNext from the pooled [CLS]"))
    else:
        rows.append(("NSP head", "is-next classifier", None, NOT_IN_CHECKPOINT))

    total = base + sum(n or 0 for part, _, n, _ in rows if part.endswith("head"))
    rows.append(("Checkpoint", "total", total, "base encoder + the heads it has; shared weights once"))
    table = pd.DataFrame(rows, columns=["part", "component", "parameters", "note"])
    subtotal = table["component"].isin(["all embeddings", "one layer", "total"]) | (table["part"] == "Encoder layer 0")
    table["adds up to total"] = ~subtotal & table["parameters"].notna()
    table["parameters"] = table["parameters"].astype("Int64")
    table["% of total"] = share(table["parameters"], total)
    # Seed 003 counts shares of the base encoder ("encoder layers contain 77.7 %"): the heads are not part of it
    in_base = ~table["part"].isin(["MLM head", "NSP head", "Checkpoint"])
    table["% of base encoder"] = share(table["parameters"], base).where(in_base)
    return table


def share(counts: pd.Series, whole: int) -> pd.Series:
    """Each count as a percentage of ``whole`` to two decimals; below 0.01 %, two significant figures, so that
    a small part (the NSP head: 1,538 of 110 million) does not read 0.00."""
    percent = 100 * counts.astype("Float64") / whole
    small = percent.map(lambda p: float(f"{p:.2g}"), na_action="ignore").astype("Float64")
    return percent.round(2).mask(percent < 0.01, small)


def bundle_parameter_counts(bundle: AnyBundle) -> pd.DataFrame:
    if bundle.description.family != "bert":
        return family_parameter_counts(bundle.model, bundle.description)
    caps = bundle.capabilities
    return parameter_counts(
        cast("BertForPreTraining", bundle.model), caps.has_pooler, caps.has_mlm_head, caps.has_nsp_head
    )


# Where each family keeps its parts, under its encoder (``FamilySpec.base``).
_EMBEDDING_ROWS = (  # module under embeddings -> component, note
    ("word_embeddings", "word embeddings", "vocab_size × embedding width"),
    ("tok_embeddings", "word embeddings", "vocab_size × hidden_size"),  # ModernBERT
    ("position_embeddings", "position embeddings", "positions × embedding width"),
    ("token_type_embeddings", "token type embeddings", "type_vocab_size × embedding width"),
    ("LayerNorm", "LayerNorm", "scale and shift"),
    ("norm", "LayerNorm", "scale (and shift)"),  # ModernBERT
)
_PROJECTION = {"albert": "encoder.embedding_hidden_mapping_in", "electra": "embeddings_project"}
_LAYERS = {"distilbert": "transformer.layer", "albert": "encoder.albert_layer_groups", "modernbert": "layers"}
_FINAL_NORM = {"modernbert": "final_norm"}
_ATTENTION_NAMES = ("attention.", "attn.", "attn_norm.", "sa_layer_norm.")  # a layer's attention and its norm
_ATTENTION_NOTE = {"modernbert": "fused query-key-value projection (Wqkv), output projection (Wo), its norm"}
_FEED_FORWARD_NOTE = {
    "modernbert": "gated (GLU) MLP: Wi makes 2 × intermediate_size, half gating the other half; Wo back; its norm",
}
_HEAD_ROWS = {"MLM": "fill-mask head", "NSP": "is-next classifier", "SOP": "sentence-order classifier",
              "RTD": "replaced-token detector"}  # fmt: skip


def _rows_under(named: dict[str, nn.Parameter], prefix: str) -> dict[str, nn.Parameter]:
    return {name: p for name, p in named.items() if name.startswith(prefix)}


def _size(parameters: dict[str, nn.Parameter]) -> int:
    return sum(p.numel() for p in parameters.values())


def family_parameter_counts(model: nn.Module, description: ModelDescription) -> pd.DataFrame:
    """Parameters by component for any member of BERT's family, in ``parameter_counts``' columns.

    Every parameter of the model (a tensor shared by several modules listed once, under the encoder's name:
    a tied MLM decoder is the word embeddings) falls in exactly one row that adds up to the total; a head or
    pooler the checkpoint lacks has no count and is left out of the total. ALBERT's encoder is its one shared
    layer (counted once, run ``num_layers`` times); factorised embeddings come with their projection up to
    ``hidden_size``.
    """
    spec = family_spec(cast("Any", model).config)
    assert spec is not None
    named = encoder_first(model, f"{spec.base}.")
    taken: set[str] = set()
    rows: list[tuple[str, str, int | None, str, bool]] = []  # part, component, count, note, adds up to the total

    def take(prefix: str) -> dict[str, nn.Parameter]:
        found = {n: p for n, p in _rows_under(named, prefix).items() if n not in taken}
        taken.update(found)
        return found

    base = f"{spec.base}."
    for module, component, note in _EMBEDDING_ROWS:
        found = take(f"{base}embeddings.{module}.")
        if found:
            rows.append(("Embeddings", component, _size(found), note, True))
    if description.positions == "rotary":
        rows.append(("Embeddings", "position embeddings", None, "none: rotary positions turn q and k instead", False))
    if description.factorised_embeddings:
        projection = take(f"{base}{_PROJECTION[description.family]}.")
        rows.append(("Embeddings", "projection to hidden_size", _size(projection),
                     f"{description.embedding_size} → {description.hidden_size}: factorised embeddings", True))  # fmt: skip
    embeddings = sum(n or 0 for part, _, n, _, adds in rows if adds)
    rows.append(("Embeddings", "all embeddings", embeddings, "", False))

    layers_path = f"{base}{_LAYERS.get(description.family, 'encoder.layer')}"
    layers = take(f"{layers_path}.")
    layer_prefix = f"{layers_path}.0.albert_layers.0." if description.family == "albert" else f"{layers_path}.0."
    one_layer = _rows_under(layers, layer_prefix)
    attention = {n: p for n, p in one_layer.items() if n.removeprefix(layer_prefix).startswith(_ATTENTION_NAMES)}
    family, count_of_layers = description.family, description.num_layers
    if description.shares_layers:
        layer_note = f"one shared layer, run by all {count_of_layers} layers"
        encoder_row = f"{description.distinct_layers} distinct of {count_of_layers} layers"
        encoder_note = "ALBERT shares its layer weights: counted once"
    else:
        layer_note, encoder_row, encoder_note = "every layer has the same shape", f"all {count_of_layers} layers", ""
    attention_note = _ATTENTION_NOTE.get(family, "query, key, value, output projection, its norm")
    feed_forward_note = _FEED_FORWARD_NOTE.get(family, "up- and down-projection, its norm")
    rows += [
        ("Encoder layer 0", "attention", _size(attention), attention_note, False),
        ("Encoder layer 0", "feed-forward", _size(one_layer) - _size(attention), feed_forward_note, False),
        ("Encoder layer 0", "one layer", _size(one_layer), layer_note, False),
        ("Encoder", encoder_row, _size(layers), encoder_note, True),
    ]
    final_norm = take(f"{base}{_FINAL_NORM[description.family]}.") if description.family in _FINAL_NORM else {}
    if final_norm:
        rows.append(("Encoder", "final norm", _size(final_norm), "after the last layer", True))
    if spec.pooler:
        pooler = take(f"{spec.pooler}.")
        counted = description.pooler
        rows.append(("Pooler", "dense + tanh on [CLS]", _size(pooler) if counted else None,
                     "" if counted else NOT_IN_CHECKPOINT, counted))  # fmt: skip
    rest = {n: p for n, p in named.items() if n.startswith(base) and n not in taken}
    if rest:
        rows.append(("Encoder", "other", _size(take(base)), ", ".join(sorted(rest)), True))
    base_total = sum(n or 0 for part, _, n, _, adds in rows if adds)
    rows.append(("Base encoder", "total", base_total, "embeddings + encoder" + (" + pooler" if spec.pooler else ""),
                 False))  # fmt: skip

    for head, paths in spec.heads.items():
        found = {n: p for path in paths for n, p in take(f"{path}.").items()}
        present = description.has(head)
        note = HEAD_NAMES[head] if present else (description.why_missing(head) or NOT_IN_CHECKPOINT)
        if present or found or head == "MLM":
            rows.append((f"{head} head", _HEAD_ROWS[head], _size(found) if present else None, note, present))
    for missing in description.missing:  # a head the family never had (RoBERTa's NSP): its reason, no number
        if missing.part in _HEAD_ROWS and missing.part not in spec.heads:
            rows.append((f"{missing.part} head", _HEAD_ROWS[missing.part], None, missing.reason, False))
    unplaced = {n: p for n, p in named.items() if n not in taken}
    if unplaced:
        rows.append(("Checkpoint", "other", _size(unplaced), ", ".join(sorted(unplaced)), True))
    total = sum(n or 0 for *_, n, _, adds in rows if adds)
    rows.append(("Checkpoint", "total", total, "base encoder + the heads it has; shared weights once", False))
    table = pd.DataFrame(rows, columns=["part", "component", "parameters", "note", "adds up to total"])
    table["parameters"] = table["parameters"].astype("Int64")
    table["adds up to total"] = table["adds up to total"].astype(bool)
    table["% of total"] = share(table["parameters"], total)
    in_base = ~(table["part"].str.endswith(" head") | (table["part"] == "Checkpoint"))
    table["% of base encoder"] = share(table["parameters"], base_total).where(in_base)
    return table


def encoder_first(model: nn.Module, encoder: str) -> dict[str, nn.Parameter]:
    """Every parameter once, the encoder's (names starting with ``encoder``) first: a tensor a head shares with
    the encoder (RoBERTa's tied decoder, registered before the encoder) goes by the encoder's name."""
    every = sorted(model.named_parameters(remove_duplicate=False), key=lambda item: not item[0].startswith(encoder))
    named: dict[str, nn.Parameter] = {}
    seen: set[int] = set()
    for name, parameter in every:
        if id(parameter) not in seen:
            seen.add(id(parameter))
            named[name] = parameter
    return named


def named_parameters(model: nn.Module, encoder: str = "") -> pd.DataFrame:
    """Every named parameter of ``model`` with its shape and size (shared tensors listed once, by the name under
    ``encoder`` when one is)."""
    return pd.DataFrame(
        [
            {"name": name, "shape": " × ".join(map(str, p.shape)), "parameters": p.numel()}
            for name, p in encoder_first(model, encoder).items()
        ]
    )


def _loaded_heads(bundle: AnyBundle) -> dict[Head, tuple[str, ...]]:
    """The heads of the loaded class (its modules exist), by name: their module paths."""
    spec = family_spec(bundle.model.config)
    assert spec is not None
    modules = dict(bundle.model.named_modules())
    return {head: paths for head, paths in spec.heads.items() if all(path in modules for path in paths)}


def has_every_part(bundle: AnyBundle) -> bool:
    """Whether the checkpoint ships its whole pre-training class (``BertForPreTraining``: pooler, MLM head and NSP
    head; ELECTRA's discriminator: its RTD head): every head the loaded class has, and its pooler if any."""
    described, spec = bundle.description, family_spec(bundle.model.config)
    assert spec is not None
    return all(described.has(head) for head in _loaded_heads(bundle)) and (described.pooler or spec.pooler is None)


def module_tree(bundle: AnyBundle) -> str:
    """What ``print(model)`` shows (seed 000): the modules of the checkpoint, the heads only where it really
    has them (a checkpoint without heads is shown as the bare encoder it is: ``BertModel``, ``RobertaModel`` …)."""
    described, model = bundle.description, bundle.model
    if has_every_part(bundle):
        return repr(model)
    parts = [repr(encoder_of(model))]
    spec = family_spec(model.config)
    if not described.pooler and spec is not None and spec.pooler:
        parts.append("(this checkpoint has no pooler weights: the pooler above is not used)")
    for head, paths in _loaded_heads(bundle).items():
        if described.has(head):
            parts += [f"{head} head ({path}): {model.get_submodule(path)!r}" for path in paths]
    return "\n".join(parts)


def base_encoder_named(named: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``named`` (as ``bundle_named_parameters`` lists them) that ``BertModel`` has, the heads left out:
    the list seed 004 prints, 199 for bert-base-uncased."""
    return named[~named["name"].str.startswith("cls.")]


def matrices_and_vectors(named: pd.DataFrame) -> tuple[int, int]:
    """The base encoder's parameters (named as ``named_parameters`` lists them, heads left out) in weight
    matrices (2-D: the count seed 004 prints, 109,360,128 for bert-base) and in vectors (biases, LayerNorm)."""
    base = base_encoder_named(named)
    matrix = base["shape"].str.count("×") == 1
    return int(base.loc[matrix, "parameters"].sum()), int(base.loc[~matrix, "parameters"].sum())


def bundle_named_parameters(bundle: AnyBundle) -> pd.DataFrame:
    """The checkpoint's named parameters: the base encoder's (named as in its bare class, ``BertModel`` …), then
    those of the heads it really has. The tied MLM decoder weight is listed once, as the word embeddings."""
    described, spec = bundle.description, family_spec(bundle.model.config)
    assert spec is not None
    present = {f"{spec.base}.": True, **({f"{spec.pooler}.": described.pooler} if spec.pooler else {})}
    present |= {f"{path}.": described.has(head) for head, paths in spec.heads.items() for path in paths}
    table = named_parameters(bundle.model, f"{spec.base}.")
    prefix = table["name"].map(lambda name: max((p for p in present if name.startswith(p)), key=len, default=""))
    table = table[prefix.map(lambda p: present.get(p, True))].reset_index(drop=True)
    table["name"] = table["name"].str.removeprefix(f"{spec.base}.")
    return table


# --- The many embeddings ---------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One box of the architecture diagram: its name, its sizes in this checkpoint, and its parameters."""

    name: str
    sizes: str
    parameters: int | None  # None: not in this checkpoint

    @property
    def present(self) -> bool:
        return self.parameters is not None


@dataclass(frozen=True)
class Architecture:
    """BERT's architecture with one checkpoint's sizes, from the token ids to the heads (seed 001's figure).

    ``attention`` and ``feed_forward`` are one encoder layer's; the encoder stacks ``layers`` of them.
    The blocks' parameters, the layer's counted ``layers`` times, add up to the checkpoint's total.
    """

    tokens: Block
    word: Block
    position: Block
    segment: Block
    embeddings_sum: Block
    attention: Block
    feed_forward: Block
    last_hidden: Block
    mlm_head: Block
    pooler: Block
    nsp_head: Block
    layers: int
    distinct_layers: int | None = None  # sets of layer weights (ALBERT: one, shared by every layer); None: ``layers``
    family_name: str = "BERT"
    encoder_parameters: int | None = None  # every layer's, where they differ (ModernBERT's layer 0 has no input norm)

    def blocks(self) -> tuple[Block, ...]:
        """Every block, from input to heads."""
        return (
            self.tokens,
            self.word,
            self.position,
            self.segment,
            self.embeddings_sum,
            self.attention,
            self.feed_forward,
            self.last_hidden,
            self.mlm_head,
            self.pooler,
            self.nsp_head,
        )

    def total(self) -> int:
        """The checkpoint's parameters: every block once, the encoder layer's two once per distinct layer."""
        once = sum(b.parameters or 0 for b in self.blocks())
        layer = (self.attention.parameters or 0) + (self.feed_forward.parameters or 0)
        if self.encoder_parameters is not None:
            return once - layer + self.encoder_parameters
        distinct = self.layers if self.distinct_layers is None else self.distinct_layers
        return once + (distinct - 1) * layer

    def in_words(self) -> str:
        """The diagram as one paragraph of plain text (its text equivalent)."""

        def said(block: Block) -> str:
            if block.parameters is None:
                return f"{block.name} ({block.sizes}; not in this checkpoint)"
            count = f"; {block.parameters:,} parameters" if block.parameters else ""
            return f"{block.name} ({block.sizes}{count})"

        return (
            f"{said(self.tokens)} → the sum of {said(self.word)}, {said(self.position)} and {said(self.segment)} → "
            f"{said(self.embeddings_sum)} → {plural(self.layers, 'encoder layer')}, each {said(self.attention)} then "
            f"{said(self.feed_forward)} → {said(self.last_hidden)} → {said(self.mlm_head)}; "
            f"{said(self.pooler)} → {said(self.nsp_head)}."
        )


def architecture(config: PretrainedConfig, counts: pd.DataFrame) -> Architecture:
    """The ``Architecture`` of a checkpoint from its config and its ``parameter_counts``."""
    n = counts.set_index("component")["parameters"]
    tied = n.get("decoder weight") == 0  # a tied decoder's matrix is counted with the word embeddings

    def parameters(*components: str) -> int | None:
        values = [n.get(c) for c in components]
        return None if any(v is None or pd.isna(v) for v in values) else sum(int(v) for v in values)

    hidden, heads, layers = config.hidden_size, config.num_attention_heads, config.num_hidden_layers
    last = layers  # hidden states are numbered from 0 (the embeddings output): see bertlens.layers
    return Architecture(
        tokens=Block("Token ids", f"[CLS] A [SEP] B [SEP]; up to {config.max_position_embeddings} tokens", 0),
        word=Block("Word embeddings", f"{config.vocab_size:,} × {hidden}", parameters("word embeddings")),
        position=Block(
            "Position embeddings", f"{config.max_position_embeddings} × {hidden}", parameters("position embeddings")
        ),
        segment=Block(
            "Segment embeddings", f"{config.type_vocab_size} × {hidden}", parameters("token type embeddings")
        ),
        embeddings_sum=Block(
            "Sum and LayerNorm", f"hidden state 0; a {hidden}-long vector per token", parameters("LayerNorm")
        ),
        attention=Block(
            "Self-attention",
            f"{heads} heads × {hidden // heads} = {hidden}; query, key, value, output; add and LayerNorm",
            parameters("attention"),
        ),
        feed_forward=Block(
            "Feed-forward",
            f"{hidden} → {config.intermediate_size} → {hidden} ({config.hidden_act}); add and LayerNorm",
            parameters("intermediate", "output"),
        ),
        last_hidden=Block(f"Hidden state {last}", f"a {hidden}-long vector per token; in context", 0),
        mlm_head=Block(
            "MLM head (fill-mask)",
            f"{hidden} → {hidden} → {config.vocab_size:,} scores per token"
            + ("; decoder tied to the word embeddings" if tied else ""),
            parameters("transform (dense + LayerNorm)", "output bias", "decoder weight"),
        ),
        pooler=Block("Pooler", f"[CLS]'s vector: {hidden} → {hidden}, tanh", parameters("dense + tanh on [CLS]")),
        nsp_head=Block("NSP head (next sentence)", f"{hidden} → 2: IsNext, NotNext", parameters("is-next classifier")),
        layers=layers,
    )


def family_architecture(described: ModelDescription, counts: pd.DataFrame) -> Architecture:
    """The ``Architecture`` of a checkpoint of BERT's family other than BERT, from its description and its
    ``family_parameter_counts``: the same boxes, holding what the family has (rotary positions, no segments,
    factorised embeddings, ALBERT's shared layer, ELECTRA's replaced-token head, ALBERT's sentence-order head)."""
    n = counts.set_index("component")["parameters"]

    def parameters(*components: str) -> int | None:
        values = [n.get(c) for c in components if c in n.index]
        return None if not values or any(pd.isna(v) for v in values) else sum(int(v) for v in values)

    hidden, emb, heads = described.hidden_size, described.embedding_size, described.num_heads
    cls, sep = described.cls_token, described.sep_token
    pair_sep = f"{sep}{sep}" if described.family in ("roberta", "xlm-roberta", "camembert") else sep
    if described.positions == "rotary":
        position = Block("Rotary positions", "no table: each head turns its q and k by the position", 0)
    else:
        position = Block("Position embeddings", f"{described.max_positions} × {emb}", parameters("position embeddings"))
    types = parameters("token type embeddings")
    segment = Block(
        "Segment embeddings",
        f"{types // emb} × {emb}" + ("" if described.token_types else ": one type for every token")
        if types
        else "none: A and B told apart by the separator",
        types if types is not None else None,
    )
    projected = "; projected " + f"{emb} → {hidden}" if described.factorised_embeddings else ""
    window = (
        f"; layers {', '.join(map(str, described.global_layers))} global, the others within a {described.local_window}"
        "-token window"
        if described.attention == "local and global"
        else ""
    )
    fused = "fused Wqkv (rotary q, k)" if described.positions == "rotary" else "query, key, value"
    shared = "; one set of weights shared by all layers" if described.shares_layers else ""
    if described.has("RTD") or (described.family == "electra" and not described.has("MLM")):
        token_head = Block("RTD head (replaced?)", f"{hidden} → {hidden} → 1 score per token", parameters(
            "replaced-token detector"))  # fmt: skip
    else:
        token_head = Block("MLM head (fill-mask)", f"… → {described.vocab_size:,} scores per token",
                           parameters("fill-mask head"))  # fmt: skip
    if "sentence-order classifier" in n.index:
        pair = Block("SOP head (sentence order)", f"{hidden} → 2: in order, swapped",
                     parameters("sentence-order classifier"))  # fmt: skip
    else:
        pair = Block("NSP head (next sentence)", f"{hidden} → 2: IsNext, NotNext", parameters("is-next classifier"))
    return Architecture(
        tokens=Block("Token ids", f"{cls} A {pair_sep} B {sep}; up to {described.max_positions} tokens", 0),
        word=Block("Word embeddings", f"{described.vocab_size:,} × {emb}", parameters("word embeddings")),
        position=position,
        segment=segment,
        embeddings_sum=Block(
            "Sum and LayerNorm",
            f"hidden state 0; a {hidden}-long vector per token{projected}",
            parameters("LayerNorm", "projection to hidden_size"),
        ),
        attention=Block(
            "Self-attention",
            f"{heads} heads × {hidden // heads} = {hidden}; {fused}, output; norm{window}{shared}",
            parameters("attention"),
        ),
        feed_forward=Block(
            "Feed-forward", f"{hidden} → {described.intermediate_size} → {hidden}; norm", parameters("feed-forward")
        ),
        last_hidden=Block(
            f"Hidden state {described.num_layers}",
            f"a {hidden}-long vector per token; in context" + ("; final norm" if "final norm" in n.index else ""),
            parameters("final norm") or 0,
        ),
        mlm_head=token_head,
        pooler=Block(
            "Pooler",
            f"{cls}'s vector: {hidden} → {hidden}, tanh",
            parameters("dense + tanh on [CLS]") if described.pooler else None,
        ),  # fmt: skip
        nsp_head=pair,
        layers=described.num_layers,
        distinct_layers=described.distinct_layers,
        family_name=described.family_name,
        encoder_parameters=int(counts.loc[(counts["part"] == "Encoder") & (counts["component"] != "final norm"),
                                          "parameters"].sum()),
    )  # fmt: skip


def architecture_of(described: ModelDescription, config: PretrainedConfig, counts: pd.DataFrame) -> Architecture:
    """Any family's ``Architecture`` from its ``bundle_parameter_counts``: BERT's own, or ``family_architecture``."""
    return architecture(config, counts) if described.family == "bert" else family_architecture(described, counts)


def bundle_architecture(bundle: AnyBundle) -> Architecture:
    return architecture_of(bundle.description, bundle.model.config, bundle_parameter_counts(bundle))


@dataclass(frozen=True)
class EmbeddingParts:
    word: np.ndarray  # (tokens, hidden)
    position: np.ndarray
    token_type: np.ndarray
    summed: np.ndarray  # word + position + token type
    normalized: np.ndarray  # LayerNorm(summed)
    module_output: np.ndarray  # what the embeddings module gave in the forward pass (hidden_states[0])

    @property
    def max_abs_difference(self) -> float:
        return float(np.abs(self.normalized - self.module_output).max())

    def named(self) -> dict[str, np.ndarray]:
        """Each part by its name on screen, in the order of the sum: (tokens, hidden) each."""
        return {
            "word": self.word,
            "position": self.position,
            "token type": self.token_type,
            "sum": self.summed,
            "LayerNorm(sum)": self.normalized,
            "embeddings output": self.module_output,
        }

    def norms(self) -> pd.DataFrame:
        """The L2 norm of each part computed by hand, per token, and how far LayerNorm(sum) is from the module."""
        parts = {name: v for name, v in self.named().items() if name != "embeddings output"}
        return pd.DataFrame({f"‖{name}‖": np.linalg.norm(v, axis=-1) for name, v in parts.items()}).assign(
            **{"max |difference|": np.abs(self.normalized - self.module_output).max(axis=-1)}
        )


def bert_like_embeddings(description: ModelDescription) -> str | None:
    """Why the embeddings are not BERT's sum (word + learned position + token type, LayerNorm, straight into layer
    0) that the Embeddings checks recompute; None when they are (BERT, an ELECTRA without factorised embeddings)."""
    if description.positions == "rotary":
        return NO_POSITION_TABLE.format(name=description.family_name)
    if description.positions != "learned absolute" or not description.token_types:
        return description.why_missing("token types") or f"{description.family_name} adds no learned positions."
    if description.factorised_embeddings:
        return (
            f"{description.family_name}'s embeddings are {description.embedding_size} wide and projected to "
            f"{description.hidden_size} before layer 0 (factorised embeddings): their sum is not layer 0's input."
        )
    return None


def _looked_up(bundle: AnyBundle, encoding: Encoding) -> dict[str, np.ndarray]:
    """Each token's three embeddings, looked up, added and normalised by hand: (tokens, hidden) each.
    ``NotInThisFamily`` when the model's embeddings are not BERT's sum (``bert_like_embeddings``)."""
    reason = bert_like_embeddings(bundle.description)
    if reason is not None:
        raise NotInThisFamily(reason)
    emb = cast("Any", encoder_of(bundle.model)).embeddings
    device = bundle.device
    ids = torch.tensor(encoding.input_ids, device=device)
    positions = torch.arange(len(encoding), device=device)
    types = torch.tensor(encoding.token_type_ids, device=device)
    with torch.inference_mode():
        word = emb.word_embeddings(ids)
        position = emb.position_embeddings(positions)
        token_type = emb.token_type_embeddings(types)
        summed = word + position + token_type
        parts = {"word": word, "position": position, "token_type": token_type, "summed": summed}
        parts["normalized"] = emb.LayerNorm(summed)
    return {name: t.float().cpu().numpy() for name, t in parts.items()}


def embedding_parts(bundle: AnyBundle, analysis: Analysis) -> EmbeddingParts:
    """Look up the three embeddings of each token and add and normalise them by hand."""
    return EmbeddingParts(**_looked_up(bundle, analysis.encoding), module_output=np.asarray(analysis.hidden_states[0]))


SAME_TOKEN_COLUMNS = ("word embedding: largest difference", "entering layer 0: largest difference")


def same_tokens(bundle: AnyBundle, encoding: Encoding, other: Encoding) -> pd.DataFrame:
    """Seed 004's "I am Sinan" against "I am Matt": each token of ``encoding`` that ``other`` has too, with how far
    apart the two inputs put it (the largest absolute difference of any dimension, computed by hand as the
    Embeddings tab checks it). Its word-embedding row is a look-up, the same in every input (0); the vector entering
    layer 0 adds the position and the token type, so it is the same exactly where both are. A token is paired with
    its occurrence in ``other`` at the same position and type when there is one, else with its first."""
    mine, theirs = _looked_up(bundle, encoding), _looked_up(bundle, other)
    places: dict[str, list[tuple[int, int]]] = {}
    for there, (token, kind) in enumerate(zip(other.tokens, other.token_type_ids, strict=True)):
        places.setdefault(token, []).append((there, kind))
    rows = []
    for here, (token, kind) in enumerate(zip(encoding.tokens, encoding.token_type_ids, strict=True)):
        if token not in places:
            continue
        there, other_kind = (here, kind) if (here, kind) in places[token] else places[token][0]
        rows.append(
            {
                "token": token,
                "position": here,
                "token type": kind,
                "position in the other": there,
                "token type in the other": other_kind,
                SAME_TOKEN_COLUMNS[0]: float(np.abs(mine["word"][here] - theirs["word"][there]).max()),
                SAME_TOKEN_COLUMNS[1]: float(np.abs(mine["normalized"][here] - theirs["normalized"][there]).max()),
            }
        )
    columns = ["token", "position", "token type", "position in the other", "token type in the other"]
    return pd.DataFrame(rows, columns=[*columns, *SAME_TOKEN_COLUMNS])


# --- The pooler ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolerCheck:
    by_hand: np.ndarray  # tanh(dense(final [CLS] vector))
    pooler_output: np.ndarray  # what the model returned

    @property
    def max_abs_difference(self) -> float:
        return float(np.abs(self.by_hand - self.pooler_output).max())


def pooler_check(bundle: AnyBundle, analysis: Analysis) -> PoolerCheck | None:
    """The final [CLS] vector through the pooler's dense layer and tanh, against ``pooler_output``.

    None when the checkpoint has no pooler (BERT's ``pooler.dense``; ALBERT's pooler is the dense layer itself).
    """
    pooler = getattr(encoder_of(bundle.model), "pooler", None)
    if analysis.pooler_output is None or not bundle.capabilities.has_pooler or pooler is None:
        return None
    dense = cast("nn.Linear", getattr(pooler, "dense", pooler))
    cls_vector = torch.tensor(np.asarray(analysis.hidden_states[-1][0]), device=bundle.device)
    with torch.inference_mode():
        by_hand = torch.tanh(dense(cls_vector)).float().cpu().numpy()
    return PoolerCheck(by_hand=by_hand, pooler_output=np.asarray(analysis.pooler_output))


def _shape(*dims: int) -> str:
    return f"({', '.join(str(d) for d in dims)})"


def forward_outputs(
    analysis: Analysis, capabilities: Capabilities, described: ModelDescription | None = None
) -> pd.DataFrame:
    """What one forward pass of this input returns, as transformers hands it over (batch of one; ``BertModel``'s
    outputs, then the pre-training heads'): each output's name, shape, number of values and meaning. Seeds 000,
    001 and 004 print these shapes one by one. Heads the checkpoint lacks are named, with no shape. With the
    ``described`` checkpoint of another family, its own pre-training class's head outputs."""
    caps = capabilities
    layers, heads, n = analysis.attentions.shape[:3]
    hidden = analysis.hidden_states.shape[-1]
    rows: list[tuple[str, str | None, int | None, str]] = [
        ("input_ids", _shape(1, n), n, "the token ids going in (token_type_ids and attention_mask: the same shape)"),
        (
            "hidden_states",
            f"{layers + 1} × {_shape(1, n, hidden)}",
            (layers + 1) * n * hidden,
            "a tuple: [0] is the embeddings output, [h] the output of encoder layer h − 1",
        ),
        ("last_hidden_state", _shape(1, n, hidden), n * hidden, f"the same tensor as hidden_states[{layers}]"),
        (
            "attentions",
            f"{layers} × {_shape(1, heads, n, n)}",
            layers * heads * n * n,
            "a tuple: [l][0, h, q, k] is how much token q attends to token k in encoder layer l, head h (rows sum to 1)",
        ),
    ]
    absent = (None, None, NOT_IN_CHECKPOINT)
    rows.append(
        (
            "pooler_output",
            _shape(1, hidden),
            hidden,
            "tanh(dense(final [CLS]))" + (": what the NSP head reads" if caps.predicts_next_sentence else ""),
        )
        if caps.has_pooler
        else ("pooler_output", *absent)
    )
    if described is not None and described.family != "bert":
        rows += _family_head_outputs(described, n)
        table = pd.DataFrame(rows, columns=["output", "shape", "values", "holds"])
        return table.astype({"values": "Int64"})
    rows.append(
        (
            "prediction_logits",
            _shape(1, n, caps.vocab_size),
            n * caps.vocab_size,
            "the MLM head's score of every vocabulary entry at every position (BERT Lens computes it at the masks only)",
        )
        if caps.has_mlm_head
        else ("prediction_logits", *absent)
    )
    rows.append(
        ("seq_relationship_logits", _shape(1, 2), 2, "the NSP head's two scores: [0, 0] IsNext, [0, 1] NotNext")
        if caps.predicts_next_sentence
        else ("seq_relationship_logits", *absent)
    )
    table = pd.DataFrame(rows, columns=["output", "shape", "values", "holds"])
    return table.astype({"values": "Int64"})


def _family_head_outputs(described: ModelDescription, n: int) -> list[tuple[str, str | None, int | None, str]]:
    """The head outputs of a family's pre-training class (``FamilySpec.pretraining_class``), by their names there:
    ALBERT's ``prediction_logits`` and ``sop_logits``, the others' ``logits`` (MLM, or ELECTRA's per-token RTD)."""
    absent = (None, None, NOT_IN_CHECKPOINT)
    mlm_name = "prediction_logits" if described.family == "albert" else "logits"
    vocab = described.vocab_size
    rows: list[tuple[str, str | None, int | None, str]] = []
    if described.family == "electra" and not described.has("MLM"):
        rows.append(
            ("logits", _shape(1, n), n, "the discriminator's score per token: above 0 means it looks replaced")
            if described.has("RTD")
            else ("logits", *absent)
        )
    else:
        rows.append(
            (
                mlm_name,
                _shape(1, n, vocab),
                n * vocab,
                "the MLM head's score of every vocabulary entry at every position",
            )
            if described.has("MLM")
            else (mlm_name, *absent)
        )
    if described.family == "albert":
        rows.append(
            ("sop_logits", _shape(1, 2), 2, "the SOP head's two scores: [0, 0] in order, [0, 1] swapped")
            if described.has("SOP") and described.pooler
            else ("sop_logits", *absent)
        )
    return rows
