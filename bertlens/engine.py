"""The only way to a model: thread-safe tokenization and one bounded, batched queue of forward passes.

A whole class shares one server, one tokenizer and one model per model name. This module keeps
them apart and bounded:

- ``ThreadSafeTokenizer`` runs every tokenizer call under one lock and restores the backend's
  neutral state (no truncation, no padding) after it: Hugging Face fast tokenizers change those
  settings on the shared backend in every call, so one session's Padding lab (max_length 8)
  would otherwise cut another session's sentence. (Measured: the lock costs ~2 µs on a 40 µs
  call; a copy per worker costs ~54 ms and ~1 MB each — see docs/running-a-class.md, "Serving a class".)
- ``Admission``: at most ``max_passes`` forward passes at once, run by that many worker threads,
  sharing the cores: a pass alone uses all of torch's threads, passes side by side one core each;
  the rest wait in a queue of three tiers: a view reopened after its server went away (its
  student already waited once, on the replica that died), then visitors, then page presets
  computed in the background; within a tier, in the order the requests were first made. A request
  moves up a tier once it has waited its tier's patience, so nothing waits for ever behind a
  higher tier. A waiting caller reports (position, estimated seconds) about twice a second
  through the callback installed with ``reporting_waits``; if the callback raises (Streamlit
  stops or reruns the session from its next ``st`` call), the request leaves the queue and,
  when nobody else waits for it, never runs.
- ``Engine`` (one per loaded model, ``engine_for``): identical concurrent requests run once
  (single flight); concurrent single-input analyses are coalesced into one padded batch where
  that is faster on a CPU (short inputs, little padding); every request has a time budget.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import itertools
import math
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import torch

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

MAX_PASSES_ENV = "BERTLENS_MAX_CONCURRENT_PASSES"
REQUEST_SECONDS_ENV = "BERTLENS_REQUEST_SECONDS"
DEFAULT_REQUEST_SECONDS = 90.0
NUMBER = re.compile(r"\d+(\.\d+)?", re.ASCII)  # what the settings accept: no "1_0", no "1e3", no other digits
REPORT_EVERY_SECONDS = 0.5  # how often a waiting caller hears its position

# Micro-batching (measured on 2 cores, bert-base: 4 inputs of 16 / 64 / 128 / 256 tokens batched take
# 0.50 / 0.58 / 0.75 / 1.01 of the time one after another; mixed 16/64/128/128 takes 1.16).
BATCH_MAX_TOKENS = 128  # longer inputs gain nothing from a batch and only add memory
BATCH_MAX_INPUTS = 8
PASS_OVERHEAD_TOKENS = 50  # a pass's fixed cost, in tokens' worth of compute; batching saves it per input

WaitCallback = Callable[[int, float], None]  # (requests ahead of you, estimated seconds until your result)

_wait_callback: contextvars.ContextVar[WaitCallback | None] = contextvars.ContextVar("bertlens_wait", default=None)
# Queue tiers, served in this order (within a tier, in the order the requests were first made).
REOPENED, VISITOR, BACKGROUND = 0, 1, 2
# How long a request waits in its tier before it moves up one: presets wait behind visitors at most 5 s,
# visitors behind reopened views at most 30 s (a flood of reopened views, forged or not, starves nobody).
PATIENCE_SECONDS = {BACKGROUND: 5.0, VISITOR: 30.0}
_tier: contextvars.ContextVar[int] = contextvars.ContextVar("bertlens_tier", default=VISITOR)


class RequestTimeout(Exception):
    """A request waited or ran longer than the per-request time budget."""

    def __init__(self, seconds: float):
        super().__init__(
            f"The model did not answer within {seconds:g} s (the per-request time limit): the server is "
            f"busy. Try again in a moment, or ask whoever runs it to raise `{REQUEST_SECONDS_ENV}`."
        )
        self.seconds = seconds


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class EngineSettings:
    max_passes: int  # forward passes at once
    request_seconds: float  # per-request time budget (waiting included)


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# The most threads one pass uses (torch's setting when this module is imported, before any worker changes
# its own: a worker's ``torch.set_num_threads`` also changes what ``torch.get_num_threads`` says in new threads).
PASS_THREADS = max(1, torch.get_num_threads())


def default_max_passes(cores: int | None = None, threads: int = PASS_THREADS) -> int:
    """As many passes as fit the cores at torch's threads each, and at least one per thread: with torch on
    every core (its default), passes side by side run on one thread each, alone on all
    (``Admission.threads_for_pass``). A pass's threads wait for each other at every operation, and for any
    Python thread that holds a core: in the class load on 2 cores, serving efficiency went from 80–82 % (one
    pass at a time on both cores) to 91–97 % (docs/benchmarks.md, *Class load results*). With ``OMP_NUM_THREADS`` set below the
    cores (replicas, containers), the cores ÷ threads passes of before."""
    return max(threads, (cores or available_cores()) // threads)


def engine_settings(env: Mapping[str, str] | None = None) -> EngineSettings:
    """From ``BERTLENS_MAX_CONCURRENT_PASSES`` and ``BERTLENS_REQUEST_SECONDS`` (unset or blank: the defaults).

    A malformed value raises ``ValueError`` naming it and what is accepted: ``bertlens.settings.load_settings``
    checks them on every run, so the app says so and serves no page (fail closed, like the budgets).
    """
    env = os.environ if env is None else env

    def number(name: str, convert: Callable[[str], float], default: float, smallest: float, accepted: str) -> Any:
        raw = (env.get(name) or "").strip()
        if not raw:
            return default
        value = convert(raw) if NUMBER.fullmatch(raw) and (convert is float or raw.isdigit()) else math.nan
        if not (math.isfinite(value) and value >= smallest):
            raise ValueError(f"{name} is {raw[:40]!r}. Accepted: {accepted}.")
        return value

    return EngineSettings(
        max_passes=number(MAX_PASSES_ENV, int, default_max_passes(), 1, "a whole number ≥ 1 (forward passes at once)"),
        request_seconds=number(REQUEST_SECONDS_ENV, float, DEFAULT_REQUEST_SECONDS, 0.001, "seconds, at least 0.001"),
    )


# --------------------------------------------------------------------------- how callers wait


@contextlib.contextmanager
def reporting_waits(callback: WaitCallback | None) -> Iterator[None]:
    """Engine requests made in this block report their queue position and estimate to ``callback``."""
    token = _wait_callback.set(callback)
    try:
        yield
    finally:
        _wait_callback.reset(token)


@contextlib.contextmanager
def queue_tier(tier: int) -> Iterator[None]:
    """Requests made in this block queue in ``tier`` (REOPENED, VISITOR or BACKGROUND)."""
    token = _tier.set(tier)
    try:
        yield
    finally:
        _tier.reset(token)


def background_priority() -> contextlib.AbstractContextManager[None]:
    """Requests made in this block (warm-up) wait behind every visitor's request."""
    return queue_tier(BACKGROUND)


def reopened_priority() -> contextlib.AbstractContextManager[None]:
    """Requests made in this block (a view reopened after its replica died) go ahead of every visitor's."""
    return queue_tier(REOPENED)


# --------------------------------------------------------------------------- thread-safe tokenizer


class ThreadSafeTokenizer:
    """A shared tokenizer whose every call runs alone and leaves the backend neutral.

    Attribute reads and method calls go to the wrapped tokenizer under one re-entrant lock; the
    backend (``backend_tokenizer`` / ``_tokenizer``) is handed out wrapped the same way.
    """

    def __init__(self, tokenizer: Any, lock: threading.RLock | None = None, backend: bool = False):
        object.__setattr__(self, "_wrapped", tokenizer)
        object.__setattr__(self, "_lock", lock or threading.RLock())
        object.__setattr__(self, "_is_backend", backend)

    @property
    def wrapped(self) -> Any:
        return self._wrapped

    def _neutral(self) -> None:
        backend = self._wrapped if self._is_backend else getattr(self._wrapped, "_tokenizer", None)
        if backend is not None and hasattr(backend, "no_truncation"):
            if backend.truncation is not None:
                backend.no_truncation()
            if backend.padding is not None:
                backend.no_padding()

    def _locked(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                try:
                    return method(*args, **kwargs)
                finally:
                    self._neutral()

        call.__name__ = getattr(method, "__name__", "call")
        call.__doc__ = getattr(method, "__doc__", None)
        return call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._locked(self._wrapped)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        with self._lock:
            value = getattr(self._wrapped, name)
        if name in ("backend_tokenizer", "_tokenizer"):
            return ThreadSafeTokenizer(value, self._lock, backend=True)
        return self._locked(value) if callable(value) and not isinstance(value, type) else value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("the shared tokenizer is read-only: pass settings per call")

    def __len__(self) -> int:
        with self._lock:
            return len(self._wrapped)

    def __repr__(self) -> str:
        return f"ThreadSafeTokenizer({self._wrapped!r})"


def thread_safe(tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    """Wrap a tokenizer once (wrapping a wrapped one returns it). Typed as what it wraps: the proxy
    answers every attribute and call of the tokenizer."""
    if isinstance(tokenizer, ThreadSafeTokenizer):
        return tokenizer
    return cast("PreTrainedTokenizerBase", ThreadSafeTokenizer(tokenizer))


# --------------------------------------------------------------------------- tickets and admission


QUEUED, RUNNING, DONE, CANCELLED = "queued", "running", "done", "cancelled"


@dataclass(eq=False)
class Ticket:
    """One unit of work in the queue: a task, or one input of a batchable analysis."""

    engine: Engine
    key: Hashable
    cost: float  # tokens' worth of compute, for estimates
    work: Callable[[], Any] | None  # a task; None for a batchable item
    item: Any = None  # the batchable input (for analyses: the bundle and the Encoding)
    length: int = 0  # the batchable input's token count
    tier: int = VISITOR
    seq: int = 0
    submitted: float = 0.0
    state: str = QUEUED
    waiters: int = 0
    started: float = 0.0
    result: Any = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def seconds(self) -> float:
        return self.cost * self.engine.seconds_per_token


class Admission:
    """At most ``max_passes`` passes at once (run by as many worker threads, sharing ``cores`` threads), the rest
    by tier, then by first request."""

    def __init__(self, max_passes: int = 1, cores: int | None = None, pass_threads: int = PASS_THREADS):
        self.max_passes = max_passes
        self.cores = max(cores or available_cores(), max_passes)  # the threads all passes share
        self.pass_threads = pass_threads  # the most one pass uses
        self._cond = threading.Condition()
        self._queue: list[Ticket] = []  # kept sorted by (tier, seq)
        self._running: list[Ticket] = []
        self._passes_running = 0
        self._threads_in_use = 0
        self._seq = itertools.count()
        self._workers: list[threading.Thread] = []
        self._closed = False

    # -- queue

    def _sort(self) -> None:
        self._queue.sort(key=lambda t: (t.tier, t.seq))

    def submit(self, ticket: Ticket) -> None:
        with self._cond:
            if self._closed:
                raise RuntimeError("the server is shutting down")
            self._start_workers()
            ticket.seq, ticket.submitted = next(self._seq), time.monotonic()
            self._queue.append(ticket)
            self._sort()
            self._cond.notify_all()

    def promote(self, ticket: Ticket, tier: int) -> None:
        """A caller of a higher ``tier`` joined ``ticket``: it now queues in that tier (a background
        ticket as if that caller had asked it: at the tier's end)."""
        with self._cond:
            if tier < ticket.tier:
                if ticket.tier == BACKGROUND:
                    ticket.seq = next(self._seq)
                ticket.tier = tier
                self._sort()

    def position(self, ticket: Ticket) -> tuple[int, float]:
        """(tickets ahead, estimated seconds until this ticket's result)."""
        with self._cond:
            now = time.monotonic()
            running = sum(max(0.0, t.seconds - (now - t.started)) for t in self._running)
            if ticket.state == RUNNING:
                return 0, max(0.0, ticket.seconds - (now - ticket.started))
            if ticket not in self._queue:
                return 0, 0.0
            ahead = self._queue[: self._queue.index(ticket)]
            work = running + sum(t.seconds for t in ahead)
            return len(ahead) + len(self._running), work / self.max_passes + ticket.seconds

    def cancel(self, ticket: Ticket) -> bool:
        """Remove a queued ticket nobody waits for any more; True when it will never run."""
        with self._cond:
            if ticket.state != QUEUED or ticket.waiters > 0:
                return False
            self._queue.remove(ticket)
            ticket.state = CANCELLED
            ticket.engine.forget(ticket)
            ticket.done.set()
            return True

    @property
    def queued(self) -> int:
        with self._cond:
            return len(self._queue)

    # -- workers

    def _start_workers(self) -> None:
        while len(self._workers) < self.max_passes:
            worker = threading.Thread(target=self._work, name=f"bertlens-pass-{len(self._workers)}", daemon=True)
            self._workers.append(worker)
            worker.start()

    def close(self, wait_seconds: float = 0.0) -> None:
        """Run nothing more: queued tickets fail, workers stop after their current pass (waited for
        up to ``wait_seconds``: torch must not be mid-pass when the interpreter exits)."""
        with self._cond:
            self._closed = True
            for ticket in self._queue:
                ticket.state, ticket.error = DONE, RuntimeError("the server is shutting down")
                ticket.engine.forget(ticket)
                ticket.done.set()
            self._queue.clear()
            self._cond.notify_all()
        deadline = time.monotonic() + wait_seconds
        for worker in self._workers:
            worker.join(timeout=max(0.0, deadline - time.monotonic()))

    def _next_batch(self) -> list[Ticket]:
        """The first ticket, plus other queued analysis inputs of its engine when one batch beats separate passes."""
        now = time.monotonic()
        for ticket in self._queue:  # no tier is starved by a steady stream of a higher one
            patience = PATIENCE_SECONDS.get(ticket.tier)
            if patience is not None and now - ticket.submitted > patience:
                ticket.tier -= 1
        self._sort()
        first = self._queue.pop(0)
        if first.work is not None or first.length > BATCH_MAX_TOKENS:
            return [first]
        batch = [first]
        for other in list(self._queue):
            if len(batch) == BATCH_MAX_INPUTS:
                break
            fits = other.engine is first.engine and other.work is None and other.length <= BATCH_MAX_TOKENS
            if fits and batch_pays([t.length for t in (*batch, other)]):
                batch.append(other)
                self._queue.remove(other)
        return batch

    def threads_for_pass(self) -> int:
        """Torch threads for the pass a worker is starting (under the lock, its batch taken from the queue):
        the free cores, split with the requests still queued that an idle worker could start now; at least one."""
        free = self.cores - self._threads_in_use
        starting_too = min(len(self._queue), self.max_passes - self._passes_running - 1)
        return max(1, min(self.pass_threads, free // (1 + starting_too)))

    def _work(self) -> None:
        while True:
            with self._cond:
                # No pass starts while the cores are all taken: it would slow a pass that runs on several.
                while (not self._queue or self._threads_in_use >= self.cores) and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                batch = self._next_batch()
                now = time.monotonic()
                for ticket in batch:
                    ticket.state, ticket.started = RUNNING, now
                self._running.extend(batch)
                threads = self.threads_for_pass()
                self._passes_running += 1
                self._threads_in_use += threads
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)  # this worker thread's own setting (OpenMP's and MKL's are per thread)
            started = time.monotonic()
            try:
                results, error = batch[0].engine.execute(batch), None
            except BaseException as exc:  # delivered to every waiter
                results, error = [None] * len(batch), exc
            elapsed = time.monotonic() - started
            batch[0].engine.learn(sum(t.cost for t in batch), elapsed)
            with self._cond:
                self._passes_running -= 1
                self._threads_in_use -= threads
                for ticket, result in zip(batch, results):
                    ticket.result, ticket.error, ticket.state = result, error, DONE
                    self._running.remove(ticket)
                    ticket.engine.forget(ticket)
                    ticket.done.set()
                self._cond.notify_all()


def batch_pays(lengths: Sequence[int]) -> bool:
    """One padded batch beats separate passes when the padding added costs less than the passes saved."""
    padding = len(lengths) * max(lengths) - sum(lengths)
    return max(lengths) <= BATCH_MAX_TOKENS and padding <= (len(lengths) - 1) * PASS_OVERHEAD_TOKENS


# --------------------------------------------------------------------------- the engine


class Engine:
    """One model's door: single flight, micro-batched analyses, tasks, all through one ``Admission``."""

    def __init__(
        self,
        batch_forward: Callable[[list[Any]], list[Any]] | None = None,
        admission: Admission | None = None,
        request_seconds: float | None = None,
        seconds_per_token: float = 1e-3,
    ):
        self.batch_forward = batch_forward  # inputs -> results (one padded pass), for batchable analyses
        self.admission = admission or shared_admission()
        self._request_seconds = request_seconds  # None: BERTLENS_REQUEST_SECONDS, read per request
        self.seconds_per_token = seconds_per_token  # learned: a moving average over finished passes
        self._inflight: dict[Hashable, Ticket] = {}
        self._lock = threading.Lock()
        self.executions = 0  # tasks and batch items actually run (tests)

    @property
    def request_seconds(self) -> float:
        return self._request_seconds if self._request_seconds is not None else engine_settings().request_seconds

    # -- called by the admission's workers

    def execute(self, batch: list[Ticket]) -> list[Any]:
        with self._lock:
            self.executions += len(batch)
        if batch[0].work is not None:
            return [batch[0].work()]
        assert self.batch_forward is not None
        return self.batch_forward([t.item for t in batch])

    def learn(self, cost: float, seconds: float) -> None:
        if cost > 0:
            self.seconds_per_token = 0.7 * self.seconds_per_token + 0.3 * seconds / cost

    def forget(self, ticket: Ticket) -> None:
        with self._lock:
            if self._inflight.get(ticket.key) is ticket:
                del self._inflight[ticket.key]

    # -- called by request threads

    def run(self, key: Hashable, work: Callable[[], Any], tokens: int) -> Any:
        """Run ``work`` (one or more forward passes over ``tokens`` tokens) as one admitted task."""
        return self._request(key, lambda: Ticket(self, key, tokens + PASS_OVERHEAD_TOKENS, work))

    def analyze(self, key: Hashable, item: Any, length: int) -> Any:
        """One input's analysis, possibly in a padded batch with other concurrent inputs (``batch_forward``)."""
        return self._request(key, lambda: Ticket(self, key, length + PASS_OVERHEAD_TOKENS, None, item, length))

    def _request(self, key: Hashable, make: Callable[[], Ticket]) -> Any:
        while True:
            with self._lock:
                found = self._inflight.get(key)
                fresh = found is None
                if found is None:
                    ticket = make()
                    ticket.tier = _tier.get()
                    self._inflight[key] = ticket
                else:
                    ticket = found
                ticket.waiters += 1
            if fresh:
                self.admission.submit(ticket)
            if self._wait(ticket):
                if ticket.error is not None:
                    raise ticket.error
                return ticket.result
            # else: the ticket was cancelled by its last other waiter just as we joined; ask again

    def _wait(self, ticket: Ticket) -> bool:
        """Wait for ``ticket`` (one of its ``waiters``), reporting; True when it ran, False when cancelled.

        Leaving early (the time budget, or the callback raising) cancels it if nobody else waits.
        """
        started, budget = time.monotonic(), self.request_seconds
        deadline = started + budget
        self.admission.promote(ticket, _tier.get())
        callback = _wait_callback.get()
        try:
            while not ticket.done.is_set():
                if callback is not None:
                    ahead, seconds = self.admission.position(ticket)
                    if ahead or time.monotonic() - started >= REPORT_EVERY_SECONDS:
                        callback(ahead, seconds)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RequestTimeout(budget)
                ticket.done.wait(timeout=min(REPORT_EVERY_SECONDS, left))
        except BaseException:
            with self._lock:
                ticket.waiters -= 1
            self.admission.cancel(ticket)
            raise
        with self._lock:
            ticket.waiters -= 1
        return ticket.state == DONE


_shared_admission: Admission | None = None
_shared_lock = threading.Lock()
_engines: weakref.WeakKeyDictionary[Any, Engine] = weakref.WeakKeyDictionary()


def shared_admission() -> Admission:
    """The process's one admission (all models share the cores)."""
    global _shared_admission
    with _shared_lock:
        if _shared_admission is None:
            _shared_admission = Admission(engine_settings().max_passes)
            atexit.register(_shared_admission.close, wait_seconds=30.0)
        return _shared_admission


def engine_for(model: Any, batch_forward: Callable[[list[Any]], list[Any]]) -> Engine:
    """The engine of a loaded model (one per model object: a fallback bundle shares its model's)."""
    with _shared_lock:
        engine = _engines.get(model)
    if engine is None:
        params = sum(p.numel() for p in model.parameters()) if hasattr(model, "parameters") else 1e8
        fresh = Engine(batch_forward, seconds_per_token=1e-3 * params / 1.1e8)
        with _shared_lock:
            engine = _engines.setdefault(model, fresh)
    return engine
