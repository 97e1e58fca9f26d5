"""Warm start: every page's presets are computed in the background when a model is first used, through
the same cached functions the pages call, so a class's first clicks are cache hits.

The work waits behind every visitor's request (``background_priority``) and runs in its own thread:
the first visitor is never held up by it. When it is done, everything it left alive (every view
module and the libraries they import, the cached presets) is frozen out of the collector's walk, as
the model is after its load: measured, the view modules alone add ~75,000 tracked objects, 33 ms to
the full collection Streamlit runs after every script run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from functools import partial

from streamlit.runtime import Runtime

from bertlens.attention import PRESETS as ATTENTION_PRESETS
from bertlens.compare import SEED_FIRST
from bertlens.curriculum import LESSONS
from bertlens.engine import background_priority
from bertlens.family import NotInThisFamily
from bertlens.lessons import Step
from bertlens.mlm import DEFAULT_K, with_mask_token
from bertlens.nsp import DEFAULT_A, DEFAULT_B, DEFAULT_CANDIDATES, DEFAULT_PAIRS
from bertlens.sense_presets import DEFAULT_PRESET
from bertlens.sense_presets import PRESETS as SENSE_PRESETS
from bertlens.serving import freeze_long_lived_objects
from bertlens.tokenization import batch_lines
from components.services import budgeted, cache
from components.services.budgeted import MAX_REFERENCES
from components.services.cache import query
from components.services.live import CachedLive
from components.services.models import cached_bundle
from components.services.settings import settings

THREAD_NAME = "bertlens-warm-start"
_started: set[str] = set()
_lock = threading.Lock()


class _NoSessionWarnings(logging.Filter):
    """The warm-up is no session: Streamlit's "missing ScriptRunContext" (one per st call in a cached
    function, e.g. the senses progress bar) is expected there and would flood the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.threadName != THREAD_NAME


logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(_NoSessionWarnings())


def preset_requests(model_name: str) -> list[Callable[[], object]]:
    """Each page's first view, as the page itself asks for it (same cached function, same arguments)."""
    bundle = cached_bundle(model_name)
    caps, mask = bundle.capabilities, bundle.description.mask_token
    first = query(model_name, SEED_FIRST)  # the pages' example sentence (state.widgets.DEFAULT_TEXT)
    requests: list[Callable[[], object]] = [
        lambda: cache.token_view(first),
        lambda: cache.analysis(first),
        lambda: cache.embeddings(first),
        lambda: cache.pooler(first),
    ]
    requests += [partial(cache.analysis, query(model_name, p.text, p.text_b)) for p in ATTENTION_PRESETS]
    if caps.has_mlm_head:
        examples = [with_mask_token(p.text, mask) for p in ATTENTION_PRESETS if "[MASK]" in p.text and not p.text_b]
        requests += [partial(cache.mask_guesses, query(model_name, text), DEFAULT_K) for text in examples]
    if caps.has_nsp_head and caps.has_pooler:
        pairs = list(map(tuple, DEFAULT_PAIRS.itertuples(index=False)))
        requests += [
            lambda: cache.analysis(query(model_name, DEFAULT_A, DEFAULT_B)),
            lambda: budgeted.ranking(model_name, DEFAULT_A, batch_lines(DEFAULT_CANDIDATES)),
            lambda: budgeted.evaluation(model_name, pairs),
        ]
    preset = SENSE_PRESETS[DEFAULT_PRESET]
    sentences = tuple(item.sentence for item in preset.sentences)[: settings().budgets.sentences]
    requests.append(
        lambda: cache.word_vectors(query(model_name), preset.word, sentences, preset.references[:MAX_REFERENCES])
    )
    return requests + lesson_requests(model_name)


def lesson_requests(model_name: str) -> list[Callable[[], object]]:
    """Every lesson step's sentences, and its question's answer: a class follows a lesson link together."""
    live = CachedLive(cached_bundle(model_name))
    texts = {(str(s.params["text"]), str(s.params.get("b", ""))) for s in lesson_steps() if "text" in s.params}
    requests: list[Callable[[], object]] = [partial(live.analysis, a, b) for a, b in sorted(texts)]
    return requests + [partial(s.question.reveal, live) for s in lesson_steps() if s.question]


def lesson_steps() -> list[Step]:
    return [step for lesson in LESSONS.values() for step in lesson.steps]


def warm(model_name: str) -> int:
    """Compute the presets now (in this thread, behind every visitor's request); how many succeeded."""
    started, done = time.perf_counter(), 0
    with background_priority():
        for request in preset_requests(model_name):
            try:
                request()
                done += 1
            except NotInThisFamily:  # the page shows this family's reason instead, nothing to warm
                pass
            except Exception:  # a preset that fails here fails for its visitor too, with a message there
                logging.getLogger("bertlens").exception("Warm start of %s: a preset failed", model_name)
    freeze_long_lived_objects()
    logging.getLogger("bertlens").info(
        "Warm start of %s: %d presets ready in %.1f s", model_name, done, time.perf_counter() - started
    )
    return done


def serving() -> bool:
    """A real Streamlit server (not AppTest, whose runtime is a stand-in swapped around each run)."""
    return Runtime.exists() and type(Runtime.instance()) is Runtime


def warm_up(model_name: str) -> threading.Thread | None:
    """Start computing the presets of ``model_name`` (once per model per server); the thread, if started."""
    with _lock:
        if model_name in _started or not serving():
            return None
        _started.add(model_name)
    thread = threading.Thread(target=warm, args=(model_name,), name=THREAD_NAME, daemon=True)
    thread.start()
    return thread
