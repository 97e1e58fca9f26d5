"""Tokenization and the one forward pass every page reads from."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from bertlens.budgets import MAX_TEXT_CHARS
from bertlens.engine import Engine, engine_for
from bertlens.family import encoder_pass, mlm_logits, replaced_logits, sentence_logits
from bertlens.lru import BytesLRU, PerModel
from bertlens.models import AnyBundle
from bertlens.wording import blank

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

# Analyses kept for every session, per loaded model (so a server offering several models holds up to this
# much for each), least recently used out first. Bounded in bytes, not entries: a bert-base analysis is
# ~1 MB at 20 tokens, ~48 MB at 256 and ~170 MB at 512. 384 MiB holds the inputs a class of 30 is working
# on (its page switches then cost no pass); the former 8 entries took 384 MB at 256 tokens, 1.4 GB at 512.
ANALYSIS_CACHE_BYTES = 384 << 20


@dataclass(frozen=True)
class Encoding:
    """One tokenized input (a sentence or a pair), already truncated to what the model accepts."""

    input_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    token_type_ids: tuple[int, ...]
    word_ids: tuple[int | None, ...]  # index of the word within its sentence; None for special tokens
    sequence_ids: tuple[int | None, ...]  # 0 = sentence A, 1 = sentence B, None = special token
    offsets: tuple[tuple[int, int], ...]  # character span in its own sentence
    full_length: int  # token count before truncation
    full_length_a: int = 0  # sentence A's tokens before truncation
    full_length_b: int = 0  # sentence B's tokens before truncation (0: no B)

    @property
    def truncated(self) -> bool:
        return self.full_length > len(self.input_ids)

    def __len__(self) -> int:
        return len(self.input_ids)


def input_problem(text: str) -> str | None:
    """A message for text that cannot be analysed, or None when it is fine."""
    if blank(text):
        return "Type a sentence to analyse — the text box is empty."
    return None


def max_tokens(bundle: AnyBundle, cap: int | None = None) -> int:
    limit = bundle.capabilities.max_positions
    return min(limit, cap) if cap else limit


# transformers types these look-ups for a single item or a list at once; these say which.


def no_token(token_id: int) -> str:
    """What stands for an id the model scores but its tokenizer has no entry for (a checkpoint whose output layer is
    padded past its vocabulary, e.g. to a multiple of 64)."""
    return f"[id {token_id}: no token]"


def tokens_of(tokenizer: PreTrainedTokenizerBase, ids: Sequence[int]) -> list[str]:
    """The vocabulary entries of ``ids`` (``no_token(id)`` for an id past the vocabulary)."""
    tokens = tokenizer.convert_ids_to_tokens(list(ids))
    assert isinstance(tokens, list)
    return [no_token(int(i)) if token is None else token for i, token in zip(ids, tokens)]


def token_of(tokenizer: PreTrainedTokenizerBase, token_id: int) -> str:
    """The vocabulary entry of one id (``no_token(id)`` for an id past the vocabulary)."""
    return tokens_of(tokenizer, [token_id])[0]


def ids_of(tokenizer: PreTrainedTokenizerBase, tokens: Sequence[str]) -> list[int]:
    """The ids of vocabulary entries (the unknown token's id for a string that is none)."""
    ids = tokenizer.convert_tokens_to_ids(list(tokens))
    assert isinstance(ids, list)
    return ids


def text_of(tokenizer: PreTrainedTokenizerBase, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
    """``ids`` decoded back to text."""
    text = tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)
    assert isinstance(text, str)
    return text


def normalizer_of(tokenizer: PreTrainedTokenizerBase) -> Callable[[str], str]:
    """What the tokenizer reads of a text before splitting it (an uncased BERT: lower case, accents and invisible
    characters gone, a space each side of a Chinese character); the text itself when it has no normalizer."""
    normalizer = tokenizer.backend_tokenizer.normalizer  # stateless: safe to call from any session
    return normalizer.normalize_str if normalizer is not None else str


def through_marks(text: str, end: int) -> int:
    """``end`` moved past the combining marks and invisible characters that follow it: a token's span ends before
    an accent its tokenizer strips ("café" typed with a combining accent; the vowel signs ै and ं of Hindi's मैं)."""
    while end < len(text) and unicodedata.category(text[end]) in ("Mn", "Me", "Cf"):
        end += 1
    return end


def encode(tokenizer: PreTrainedTokenizerBase, text: str, text_b: str | None = None, max_length: int = 512) -> Encoding:
    """Tokenize ``text`` (and ``text_b`` as sentence B), truncating to ``max_length`` tokens."""
    text, text_b = text[:MAX_TEXT_CHARS], (text_b[:MAX_TEXT_CHARS] if text_b else None)
    full = tokenizer(text, text_b, truncation=False)
    full_length = len(full["input_ids"])
    enc = tokenizer(
        text,
        text_b,
        truncation=full_length > max_length,
        max_length=max_length,
        return_offsets_mapping=True,
        return_token_type_ids=True,
    )
    ids = enc["input_ids"]
    return Encoding(
        input_ids=tuple(ids),
        tokens=tuple(tokens_of(tokenizer, ids)),
        token_type_ids=tuple(enc["token_type_ids"]),
        word_ids=tuple(enc.word_ids()),
        sequence_ids=tuple(enc.sequence_ids()),
        offsets=tuple(tuple(span) for span in enc["offset_mapping"]),
        full_length=full_length,
        full_length_a=full.sequence_ids().count(0),
        full_length_b=full.sequence_ids().count(1) if text_b else 0,
    )


def padded_batch(encodings: list[Encoding], pad_id: int | None, device: torch.device) -> dict[str, torch.Tensor]:
    """``input_ids``, ``token_type_ids`` and ``attention_mask`` for a padded batch (mask 0 on padding)."""
    width = max(len(e) for e in encodings)
    ids = torch.full((len(encodings), width), pad_id or 0, dtype=torch.long)
    types, mask = torch.zeros_like(ids), torch.zeros_like(ids)
    for row, e in enumerate(encodings):
        ids[row, : len(e)] = torch.tensor(e.input_ids)
        types[row, : len(e)] = torch.tensor(e.token_type_ids)
        mask[row, : len(e)] = 1
    return {"input_ids": ids.to(device), "token_type_ids": types.to(device), "attention_mask": mask.to(device)}


@dataclass(frozen=True, eq=False)
class Analysis:
    """Everything one forward pass gives. Arrays are read-only: the result is cached and shared."""

    encoding: Encoding
    attentions: np.ndarray  # (layers, heads, query, key); each row sums to 1
    hidden_states: np.ndarray  # (layers + 1, tokens, hidden); 0 is the embeddings output
    pooler_output: np.ndarray | None  # (hidden,) or None when the checkpoint has no pooler
    mask_positions: tuple[int, ...]  # token positions holding [MASK]
    mlm_logits: np.ndarray | None  # (masks, vocab) at mask_positions; None without an MLM head
    nsp_logits: np.ndarray | None  # (2,): index 0 = IsNext, 1 = NotNext; None without an NSP head
    sop_logits: np.ndarray | None = None  # ALBERT (2,): index 0 = in order, 1 = swapped; None without a SOP head
    rtd_logits: np.ndarray | None = None  # ELECTRA (tokens,): > 0 means "replaced"; None without an RTD head

    @property
    def nbytes(self) -> int:
        arrays = (
            self.attentions, self.hidden_states, self.pooler_output, self.mlm_logits, self.nsp_logits,
            self.sop_logits, self.rtd_logits,
        )  # fmt: skip
        return sum(a.nbytes for a in arrays if a is not None)


def _frozen(tensor: torch.Tensor) -> np.ndarray:
    array = tensor.detach().float().cpu().numpy()
    array.flags.writeable = False
    return array


def model_engine(bundle: AnyBundle) -> Engine:
    """The engine every forward pass of ``bundle``'s model goes through (one per model)."""
    return engine_for(bundle.model, _forward_items)


def _forward_items(items: list[tuple[AnyBundle, Encoding]]) -> list[Analysis]:
    """The engine's batch function: (bundle, encoding) inputs of one model (the engine keeps no bundle alive)."""
    return forward_batch(items[0][0], [encoding for _, encoding in items])


def forward_batch(bundle: AnyBundle, encodings: list[Encoding]) -> list[Analysis]:
    """One padded forward pass for several inputs (attention mask on), each result cut to its real tokens.

    Equal, to float tolerance, to one pass per input: masked keys get zero attention weight, and
    nothing a real token computes reads the padding. Any family: its heads are the ones its description lists.
    """
    model, described = bundle.model, bundle.description
    mask_id = bundle.tokenizer.mask_token_id
    masks = [tuple(i for i, t in enumerate(e.input_ids) if t == mask_id) for e in encodings]
    with torch.inference_mode():
        out = encoder_pass(model, described, padded_batch(encodings, bundle.tokenizer.pad_token_id, bundle.device))
        pooled = out.pooler_output if described.pooler else None
        pair = (
            sentence_logits(model, pooled)
            if pooled is not None and (described.has("NSP") or described.has("SOP"))
            else None
        )
        results = []
        for row, (encoding, mask_positions) in enumerate(zip(encodings, masks)):
            n = len(encoding)
            final = out.last_hidden_state[row]  # the heads read it (ModernBERT's is its last layer's, normalised)
            # The MLM decoder is the most expensive head (tokens x vocab): run it at the masks only.
            mlm = (
                _frozen(mlm_logits(model, final[list(mask_positions)]))
                if described.has("MLM") and mask_positions
                else None
            )
            pair_logits = _frozen(pair[row].clone()) if pair is not None else None
            results.append(
                Analysis(
                    encoding=encoding,
                    # Each row's layers stacked into a tensor of its own: one copy, and a cached result
                    # keeps nothing of the padded batch alive.
                    attentions=_frozen(torch.stack([layer[row, :, :n, :n] for layer in out.attentions])),
                    hidden_states=_frozen(torch.stack([layer[row, :n] for layer in out.hidden_states])),
                    pooler_output=_frozen(pooled[row].clone()) if pooled is not None else None,
                    mask_positions=mask_positions,
                    mlm_logits=mlm,
                    nsp_logits=pair_logits if described.has("NSP") else None,
                    sop_logits=pair_logits if described.has("SOP") else None,
                    rtd_logits=_frozen(replaced_logits(model, final[:n])) if described.has("RTD") else None,
                )
            )
    return results


def forward(bundle: AnyBundle, encoding: Encoding, key: Hashable | None = None) -> Analysis:
    """One forward pass (through the model's engine: queued, maybe batched): attentions, hidden
    states, and the heads the checkpoint really has. Identical concurrent ``key``s run once."""
    key = key if key is not None else ("forward", encoding.input_ids, encoding.token_type_ids)
    analysis: Analysis = model_engine(bundle).analyze(key, (bundle, encoding), len(encoding))
    return analysis


def analysis_key(text: str, text_b: str | None, max_length: int) -> Hashable:
    """What identifies one analysis request (to wait for an identical one under way)."""
    return ("analyze", text, text_b or None, max_length)


def analyze(bundle: AnyBundle, text: str, text_b: str | None = None, token_cap: int | None = None) -> Analysis:
    """Tokenize (truncating to the model's positions) and run the one forward pass."""
    max_length = max_tokens(bundle, token_cap)
    encoding = encode(bundle.tokenizer, text, text_b or None, max_length)
    return forward(bundle, encoding, analysis_key(text, text_b, max_length))


_analysis_caches: PerModel[BytesLRU[Analysis]] = PerModel(lambda: BytesLRU(ANALYSIS_CACHE_BYTES, lambda a: a.nbytes))


def analysis_cache(bundle: AnyBundle) -> BytesLRU[Analysis]:
    """The analyses of ``bundle``'s model that every session shares (they go when the model goes)."""
    return _analysis_caches.of(bundle.model)


def remembered_analysis(
    bundle: AnyBundle, text: str, text_b: str | None = None, token_cap: int | None = None
) -> Analysis:
    """``analyze``, from the model's shared analysis cache when this input was analysed before."""
    key = analysis_key(text, text_b, max_tokens(bundle, token_cap))
    cache = analysis_cache(bundle)
    found = cache.get(key)
    if found is None:
        found = analyze(bundle, text, text_b, token_cap)
        cache.put(key, found)
    return found
