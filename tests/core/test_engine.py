"""The inference engine: sessions never see each other's tokenizer settings, passes are bounded and
queued in order, batched results equal unbatched ones, and waiting is reported, limited and cancellable."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer

from bertlens import engine as engine_module
from bertlens.analysis import analyze, encode, forward_batch, max_tokens, model_engine
from bertlens.engine import (
    BACKGROUND,
    MAX_PASSES_ENV,
    REOPENED,
    REQUEST_SECONDS_ENV,
    VISITOR,
    Admission,
    Engine,
    RequestTimeout,
    ThreadSafeTokenizer,
    Ticket,
    available_cores,
    background_priority,
    batch_pays,
    default_max_passes,
    engine_settings,
    queue_tier,
    reopened_priority,
    reporting_waits,
)
from bertlens.nsp import score_pairs
from bertlens.senses import embed_word
from bertlens.tokenization import SEED_BATCH, mask_effect, pad_batch

LONG = " ".join(f"word{i % 50} is here" for i in range(200))  # well over 600 tokens


def until(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


@pytest.fixture
def admission():
    made: list[Admission] = []

    def make(max_passes: int = 1) -> Admission:
        made.append(Admission(max_passes))
        return made[-1]

    yield make
    for a in made:
        a.close()


def occupy(engine: Engine) -> tuple[threading.Event, threading.Thread]:
    """Keep the engine's one worker busy until the returned event is set."""
    started, release = threading.Event(), threading.Event()

    def block() -> str:
        started.set()
        release.wait(10)
        return "blocker"

    def hold() -> None:
        with contextlib.suppress(RequestTimeout):  # a test with a short budget times the blocker out too
            engine.run("blocker", block, 0)

    thread = threading.Thread(target=hold)
    thread.start()
    assert started.wait(10)
    return release, thread


# --------------------------------------------------------------------------- the class on one tokenizer


def test_concurrent_sessions_never_see_each_others_tokenizer_settings(tiny_bundle):
    """Padding-lab calls (max_length 8, truncation) race 600+-token analyses capped at 512 and 64.

    On the shared fast tokenizer without the engine's lock this fails: an analysis is tokenized with
    the lab's truncation (8 tokens) or none at all (606 tokens -> "size of tensor a (606) must
    match ... (512)"), or the backend refuses a concurrent borrow.
    """
    bundle = tiny_bundle
    assert len(bundle.tokenizer(LONG)["input_ids"]) > 600
    lines = (*SEED_BATCH, LONG)
    reference_lab = pad_batch(bundle.tokenizer, lines, "max_length", 8, truncation=True)
    reference = {cap: analyze(bundle, LONG, token_cap=cap) for cap in (None, 64)}
    assert len(reference[None].encoding) == 512 and len(reference[64].encoding) == 64

    def session(i: int) -> None:
        for step in range(12):
            if (i + step) % 3 == 0:
                lab = pad_batch(bundle.tokenizer, lines, "max_length", 8, truncation=True)
                assert lab.input_ids == reference_lab.input_ids and lab.width == 8
            else:
                cap = None if (i + step) % 3 == 1 else 64
                got = analyze(bundle, LONG, token_cap=cap)
                want = reference[cap]
                assert got.encoding == want.encoding
                np.testing.assert_allclose(got.attentions, want.attentions, atol=1e-5)
                np.testing.assert_allclose(got.hidden_states, want.hidden_states, atol=1e-5)
                tokens = bundle.tokenizer.tokenize(LONG)  # tokenize() reads the backend's settings too
                assert len(tokens) > 600

    with ThreadPoolExecutor(8) as pool:
        for future in [pool.submit(session, i) for i in range(8)]:
            future.result()
    backend = bundle.tokenizer.backend_tokenizer
    assert backend.truncation is None and backend.padding is None  # left neutral


def test_thread_safe_tokenizer_is_read_only_and_transparent(tiny_bundle):
    tokenizer = tiny_bundle.tokenizer
    assert isinstance(tokenizer, ThreadSafeTokenizer)
    with pytest.raises(AttributeError):
        tokenizer.model_max_length = 8
    assert tokenizer.decode(tokenizer("hello world")["input_ids"]) == "[CLS] hello world [SEP]"
    assert tokenizer.get_vocab()["[MASK]"] == tokenizer.mask_token_id
    assert tokenizer.backend_tokenizer.normalizer.normalize_str("HeLLo") == "hello"


# --------------------------------------------------------------------------- batched == unbatched


def test_batched_analyses_equal_unbatched(tiny_bundle):
    bundle = tiny_bundle
    inputs = [
        ("The capital of France is [MASK].", None),
        ("A [MASK] sat on the [MASK] near the river bank, watching the boats go by slowly.", None),
        ("I went to the store.", "At the store, I bought fresh strawberries."),
        ("Short.", None),
    ]
    encodings = [encode(bundle.tokenizer, a, b, max_tokens(bundle)) for a, b in inputs]
    assert len({len(e) for e in encodings}) == len(encodings)  # real padding in the batch
    batched = forward_batch(bundle, encodings)
    for encoding, got in zip(encodings, batched):
        [alone] = forward_batch(bundle, [encoding])
        assert got.encoding == encoding and got.mask_positions == alone.mask_positions
        assert got.attentions.shape == alone.attentions.shape == (2, 4, len(encoding), len(encoding))
        np.testing.assert_allclose(got.attentions.sum(axis=-1), 1, atol=1e-5)
        for field in ("attentions", "hidden_states", "pooler_output", "nsp_logits"):
            np.testing.assert_allclose(getattr(got, field), getattr(alone, field), atol=1e-5, err_msg=field)
        if alone.mlm_logits is not None:
            np.testing.assert_allclose(got.mlm_logits, alone.mlm_logits, atol=1e-4)
        assert not got.attentions.flags.writeable


def test_batching_rule_follows_the_measurements():
    assert batch_pays([16, 16, 16, 16]) and batch_pays([64] * 4) and batch_pays([16, 32, 48, 64])
    assert not batch_pays([16, 64, 128, 128])  # the padding costs more than the passes saved
    assert not batch_pays([256, 256])  # long inputs gain nothing


def test_concurrent_short_analyses_are_coalesced_into_one_batch(admission):
    batches: list[list[int]] = []
    engine = Engine(lambda items: batches.append(list(items)) or [i * 10 for i in items], admission(1), 10)
    release, blocker = occupy(engine)
    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(engine.analyze, f"short{i}", i, 16) for i in range(4)]
        until(lambda: engine.admission.queued == 4)
        futures.append(pool.submit(engine.analyze, "long", 99, 300))  # too long to batch
        until(lambda: engine.admission.queued == 5)
        release.set()
        assert [f.result(10) for f in futures] == [0, 10, 20, 30, 990]
    blocker.join()
    assert batches == [[0, 1, 2, 3], [99]]


# --------------------------------------------------------------------------- admission


def test_queue_is_fifo_and_reports_positions(admission):
    engine = Engine(None, admission(1), 10)
    release, blocker = occupy(engine)
    ran, reports = [], {}

    def request(name: str) -> str:
        def report(ahead: int, seconds: float) -> None:
            reports.setdefault(name, []).append((ahead, seconds))

        with reporting_waits(report):
            return engine.run(name, lambda: ran.append(name) or name, 16)

    with ThreadPoolExecutor(3) as pool:
        futures = []
        for count, name in enumerate("abc", start=1):
            futures.append(pool.submit(request, name))
            until(lambda count=count: engine.admission.queued == count)
        until(lambda: all(name in reports for name in "abc"))
        release.set()
        assert [f.result(10) for f in futures] == ["a", "b", "c"]
    blocker.join()
    assert ran == ["a", "b", "c"]
    assert [reports[name][0][0] for name in "abc"] == [1, 2, 3]  # the running blocker, then those before
    assert reports["c"][0][1] > reports["a"][0][1] > 0  # estimates grow with the queue


def test_at_most_n_passes_at_once(admission):
    engine = Engine(None, admission(2), 10)
    lock, running, peak = threading.Lock(), [0], [0]

    def work() -> None:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    with ThreadPoolExecutor(8) as pool:
        for f in [pool.submit(engine.run, i, work, 16) for i in range(8)]:
            f.result(10)
    assert peak[0] == 2 and engine.executions == 8


def asking(engine: Engine, ran: list[str]) -> Callable[..., None]:
    """``ask(name, tier)``: a request for ``name`` in queue ``tier`` that, when it runs, appends ``name`` to ``ran``."""

    def ask(name: str, tier: int = VISITOR) -> None:
        with queue_tier(tier):
            engine.run(name, lambda: ran.append(name), 16)

    return ask


def test_background_requests_wait_behind_visitors_until_a_visitor_joins(admission):
    engine = Engine(None, admission(1), 10)
    release, blocker = occupy(engine)
    ran: list[str] = []
    ask = asking(engine, ran)

    with background_priority():  # the warm start's way of asking: the same as ask(..., BACKGROUND)
        assert engine_module._tier.get() == BACKGROUND
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(ask, "preset1", BACKGROUND), pool.submit(ask, "preset2", BACKGROUND)]
        until(lambda: engine.admission.queued == 2)
        futures.append(pool.submit(ask, "visitor"))
        until(lambda: engine.admission.queued == 3)
        futures.append(pool.submit(engine.run, "preset2", lambda: ran.append("never: joins preset2"), 16))
        until(lambda: engine._inflight["preset2"].waiters == 2)
        release.set()
        [f.result(10) for f in futures]
    blocker.join()
    assert ran == ["visitor", "preset2", "preset1"]


def test_a_reopened_view_goes_ahead_of_visitors_and_lifts_the_ticket_it_joins(admission):
    engine = Engine(None, admission(1), 10)
    release, blocker = occupy(engine)
    ran: list[str] = []
    ask = asking(engine, ran)

    with reopened_priority():  # the reopened tab's way of asking: the same as ask(..., REOPENED)
        assert engine_module._tier.get() == REOPENED
    with ThreadPoolExecutor(6) as pool:
        futures = []
        for queued, name in enumerate(("visitor1", "visitor2", "shared"), 1):  # in this order
            futures.append(pool.submit(ask, name))
            until(lambda queued=queued: engine.admission.queued == queued)
        futures.append(pool.submit(ask, "reopened1", REOPENED))
        until(lambda: engine.admission.queued == 4)
        futures.append(pool.submit(ask, "shared", REOPENED))  # joins the visitor's ticket: it goes ahead with it
        until(lambda: engine._inflight["shared"].tier == REOPENED)
        position_of_shared = engine.admission.position(engine._inflight["shared"])[0]
        futures.append(pool.submit(ask, "reopened2", REOPENED))
        until(lambda: engine.admission.queued == 5)
        release.set()
        [f.result(10) for f in futures]
    blocker.join()
    assert position_of_shared == 1  # only the running blocker: in its new tier it keeps its place in time
    assert ran == ["shared", "reopened1", "reopened2", "visitor1", "visitor2"]


def test_a_visitor_who_waited_its_patience_is_not_passed_by_later_reopened_views(admission, monkeypatch):
    monkeypatch.setitem(engine_module.PATIENCE_SECONDS, VISITOR, 0.2)
    engine = Engine(None, admission(1), 10)
    release, blocker = occupy(engine)
    ran: list[str] = []
    ask = asking(engine, ran)

    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(ask, "patient visitor")]
        until(lambda: engine.admission.queued == 1)
        time.sleep(0.3)  # longer than a visitor's patience (here)
        futures += [pool.submit(ask, "reopened1", REOPENED), pool.submit(ask, "reopened2", REOPENED)]
        until(lambda: engine.admission.queued == 3)
        release.set()
        [f.result(10) for f in futures]
    blocker.join()
    assert ran[0] == "patient visitor" and set(ran[1:]) == {"reopened1", "reopened2"}


def test_time_budget_raises_and_the_request_never_runs(admission):
    engine = Engine(None, admission(1), request_seconds=0.2)
    release, blocker = occupy(engine)
    ran = []
    with pytest.raises(RequestTimeout, match=REQUEST_SECONDS_ENV) as raised:
        engine.run("late", lambda: ran.append("late"), 16)
    assert "0.2 s" in str(raised.value)
    assert engine.admission.queued == 0
    release.set()
    blocker.join()
    engine.run("after", lambda: ran.append("after"), 16)
    assert ran == ["after"]


class SessionStopped(BaseException):
    """Stands in for Streamlit's StopException, raised from the waiting session's next st call."""


def test_a_stopped_session_leaves_the_queue_and_its_request_never_runs(admission):
    engine = Engine(None, admission(1), 10)
    release, blocker = occupy(engine)
    ran = []

    def stopped(ahead: int, seconds: float) -> None:
        raise SessionStopped

    with reporting_waits(stopped), pytest.raises(SessionStopped):
        engine.run("gone", lambda: ran.append("gone"), 16)
    assert engine.admission.queued == 0 and "gone" not in engine._inflight
    release.set()
    blocker.join()
    engine.run("next", lambda: ran.append("next"), 16)
    assert ran == ["next"] and engine.executions == 2  # the blocker and "next"


def test_a_stopped_session_does_not_cancel_a_request_others_wait_for(admission):
    engine = Engine(None, admission(1), 10)
    release, blocker = occupy(engine)

    def stopped(ahead: int, seconds: float) -> None:
        raise SessionStopped

    with ThreadPoolExecutor(1) as pool:
        staying = pool.submit(engine.run, "shared", lambda: "result", 16)
        until(lambda: engine.admission.queued == 1)
        with reporting_waits(stopped), pytest.raises(SessionStopped):
            engine.run("shared", lambda: "never", 16)
        release.set()
        assert staying.result(10) == "result"
    blocker.join()


def test_identical_concurrent_requests_run_once(admission):
    engine = Engine(None, admission(1), 10)
    release, blocker = occupy(engine)
    calls = []
    with ThreadPoolExecutor(30) as pool:
        futures = [pool.submit(engine.run, "same link", lambda: calls.append(1) or object(), 16) for _ in range(30)]
        until(lambda: engine._inflight["same link"].waiters == 30)
        release.set()
        results = {id(f.result(10)) for f in futures}
    blocker.join()
    assert len(calls) == 1 and len(results) == 1


def test_a_pass_alone_uses_every_thread_and_passes_side_by_side_one_each(admission):
    """Two passes of torch's two threads on two cores wait for each other at every operation: side by side,
    each pass gets one core; alone, it gets them all, and nothing starts beside it until it ends. A worker's
    setting stays in its own thread."""
    engine = Engine(admission=admission(2))
    engine.admission.cores, engine.admission.pass_threads = 2, 2
    before = torch.get_num_threads()
    assert engine.run("alone", torch.get_num_threads, 16) == 2

    started, release = threading.Event(), threading.Event()

    def first() -> int:
        started.set()
        release.wait(10)
        return torch.get_num_threads()

    with ThreadPoolExecutor(3) as pool:
        running = pool.submit(engine.run, "first", first, 16)
        assert started.wait(10)
        side_by_side = threading.Barrier(2, timeout=10)

        def beside() -> int:
            threads = torch.get_num_threads()
            side_by_side.wait()  # both run at once
            return threads

        queued = [pool.submit(engine.run, key, beside, 16) for key in ("second", "third")]
        until(lambda: engine.admission.queued == 2)
        time.sleep(0.1)
        assert engine.admission.queued == 2  # both cores are the first pass's: the other worker waits
        release.set()
        assert running.result(10) == 2
        assert [future.result(10) for future in queued] == [1, 1]  # side by side: one core each
    assert engine.run("alone again", torch.get_num_threads, 16) == 2
    assert torch.get_num_threads() == before


def test_threads_for_a_pass_split_the_free_cores_with_what_can_start_now():
    admission = Admission(4, cores=4, pass_threads=4)
    queued = [Ticket(Engine(admission=admission), key, 16, None) for key in range(3)]
    cases = [  # (still queued, passes running, threads in use) -> threads for the pass starting now
        ((0, 0, 0), 4),  # alone: all of them
        ((1, 0, 0), 2),  # another starts beside it: half each
        ((3, 0, 0), 1),  # three more: one each
        ((3, 2, 2), 1),
        ((0, 1, 2), 2),  # the free half
        ((0, 3, 4), 1),  # nothing free: still one (never zero)
    ]
    for (waiting, running, in_use), threads in cases:
        admission._queue, admission._passes_running, admission._threads_in_use = queued[:waiting], running, in_use
        assert admission.threads_for_pass() == threads, (waiting, running, in_use)
    admission._queue = []
    admission.pass_threads = 1  # torch set to one thread (OMP_NUM_THREADS=1): never more
    admission._passes_running = admission._threads_in_use = 0
    assert admission.threads_for_pass() == 1
    assert Admission(1, cores=4, pass_threads=4).threads_for_pass() == 4  # one pass at a time: every core
    assert default_max_passes(cores=2, threads=2) == 2  # torch on every core: side by side, one thread each
    assert default_max_passes(cores=8, threads=8) == 8
    assert default_max_passes(cores=2, threads=1) == 2  # two replicas on two cores, OMP_NUM_THREADS=1 each
    assert default_max_passes(cores=6, threads=2) == 3  # a container's OMP_NUM_THREADS=2 on six cores
    assert default_max_passes(threads=1) == available_cores()


def test_settings_from_the_environment():
    assert engine_settings({MAX_PASSES_ENV: "3", REQUEST_SECONDS_ENV: "12.5"}) == engine_settings({}).__class__(3, 12.5)
    defaults = engine_settings({MAX_PASSES_ENV: " ", REQUEST_SECONDS_ENV: ""})  # blank counts as unset
    assert defaults.max_passes >= 1 and defaults.request_seconds == 90.0
    for env in ({MAX_PASSES_ENV: "0"}, {REQUEST_SECONDS_ENV: "soon"}):
        with pytest.raises(ValueError, match="Accepted: "):
            engine_settings(env)


# --------------------------------------------------------------------------- every pass goes through the engine


def test_every_model_running_function_goes_through_the_engine(tiny_bundle):
    engine = model_engine(tiny_bundle)
    before = engine.executions
    analyze(tiny_bundle, "An engine-counted sentence.")
    score_pairs(tiny_bundle, [("A first one.", "A second one.")])
    embed_word(tiny_bundle, ["The field is green.", "A field of study."], "field")
    mask_effect(tiny_bundle, pad_batch(tiny_bundle.tokenizer, SEED_BATCH, "longest", 8, truncation=True))
    assert engine.executions - before == 4


# --------------------------------------------------------------------------- mutation audit 2: batching limits,
# results to the right engine, estimates, reports


def queued_behind_one_pass(engine: Engine, requests: list[tuple[str, object, int]]) -> list:
    """Each (key, item, tokens) queued in turn behind one running pass, then all let through: their results."""
    release, blocker = occupy(engine)
    with ThreadPoolExecutor(len(requests)) as pool:
        futures = []
        for count, (key, item, tokens) in enumerate(requests, 1):
            futures.append(pool.submit(engine.analyze, key, item, tokens))
            until(lambda count=count: engine.admission.queued == count)
        release.set()
        results = [f.result(10) for f in futures]
    blocker.join()
    return results


def test_a_batch_holds_at_most_eight_inputs(admission):
    batches: list[list[int]] = []
    engine = Engine(lambda items: batches.append(list(items)) or list(items), admission(1), 10)
    assert queued_behind_one_pass(engine, [(f"short{i}", i, 16) for i in range(10)]) == list(range(10))
    assert batches == [list(range(8)), [8, 9]]


def test_inputs_of_exactly_the_batch_limit_are_still_batched(admission):
    batches: list[list[str]] = []
    engine = Engine(lambda items: batches.append(list(items)) or list(items), admission(1), 10)
    limit = engine_module.BATCH_MAX_TOKENS
    assert queued_behind_one_pass(engine, [("x", "x", limit), ("y", "y", limit)]) == ["x", "y"]
    assert batches == [["x", "y"]]  # two 128-token inputs, no padding: one pass


def test_two_models_inputs_never_share_a_batch(admission):
    """Two models share the cores (one admission): each model's inputs go through its own forward only."""
    shared = admission(1)
    seen: dict[str, list[list[str]]] = {"A": [], "B": []}

    def forward(model: str):
        return lambda items: seen[model].append(list(items)) or [f"{model}({item})" for item in items]

    model_a, model_b = Engine(forward("A"), shared, 10), Engine(forward("B"), shared, 10)
    release, blocker = occupy(model_a)
    with ThreadPoolExecutor(4) as pool:
        futures = []
        for count, (engine, item) in enumerate([(model_a, "a1"), (model_b, "b1"), (model_a, "a2"), (model_b, "b2")], 1):
            futures.append(pool.submit(engine.analyze, item, item, 16))
            until(lambda count=count: shared.queued == count)
        release.set()
        assert [f.result(10) for f in futures] == ["A(a1)", "B(b1)", "A(a2)", "B(b2)"]
    blocker.join()
    assert seen == {"A": [["a1", "a2"]], "B": [["b1", "b2"]]}


def test_the_estimate_is_the_work_ahead_shared_by_the_passes_plus_ones_own(admission):
    """Planted queue: 1 s running (just started), 1 s and 3 s queued, two passes at once: the second queued
    ticket waits (1 + 1) / 2 s, then runs 3 s."""
    engine = Engine(None, admission(2), 10, seconds_per_token=0.01)
    running, first, second = (Ticket(engine, key, cost, None) for key, cost in (("r", 100), ("q1", 100), ("q2", 300)))
    gate = engine.admission
    with gate._cond:  # no worker runs: nothing was submitted
        running.state, running.started = engine_module.RUNNING, time.monotonic()
        gate._running.append(running)
        gate._queue.extend([first, second])
    ahead, seconds = gate.position(second)
    assert ahead == 2 and seconds == pytest.approx((1.0 + 1.0) / 2 + 3.0, abs=0.05)
    assert gate.position(first) == (1, pytest.approx(1.0 / 2 + 1.0, abs=0.05))
    assert gate.position(running) == (0, pytest.approx(1.0, abs=0.05))
    gate._queue.clear()
    gate._running.clear()


def test_the_engine_learns_seconds_per_token_as_a_moving_average():
    engine = Engine(None, Admission(1), 10, seconds_per_token=1e-3)
    engine.learn(cost=100, seconds=1.0)  # this pass: 0.01 s per token
    assert engine.seconds_per_token == pytest.approx(0.7 * 1e-3 + 0.3 * 0.01)
    engine.learn(cost=0, seconds=1.0)  # nothing to learn from
    assert engine.seconds_per_token == pytest.approx(0.0037)


def test_a_request_first_in_line_hears_its_place_before_its_budget_runs_out(admission):
    """Behind one running pass, the waiting student is told "1 ahead" at once, not only after half a second."""
    engine = Engine(None, admission(1), request_seconds=0.3)
    release, blocker = occupy(engine)
    reports = []
    with reporting_waits(lambda ahead, seconds: reports.append(ahead)), pytest.raises(RequestTimeout):
        engine.run("next", lambda: "next", 16)
    release.set()
    blocker.join()
    assert reports and reports[0] == 1


def test_a_long_wait_is_reported_about_twice_a_second(admission):
    engine = Engine(None, admission(1), 30)
    release, blocker = occupy(engine)
    reports: list[int] = []

    def request() -> str:
        with reporting_waits(lambda ahead, seconds: reports.append(ahead)):
            return engine.run("waits", lambda: "ran", 16)

    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(request)
        until(lambda: engine.admission.queued == 1)
        time.sleep(2.5)  # reports due at 0, 0.5, … 2.5 s: 3 leave room for a loaded machine
        heard = len(reports)
        release.set()
        assert waiting.result(10) == "ran"
    blocker.join()
    assert heard >= 3 and set(reports) == {1}  # at once, then every REPORT_EVERY_SECONDS (not once, then silence)


def test_settings_accept_their_smallest_values():
    assert engine_settings({MAX_PASSES_ENV: "1", REQUEST_SECONDS_ENV: "0.001"}) == engine_module.EngineSettings(
        1, 0.001
    )


def test_both_ways_to_the_backend_are_locked_and_left_neutral(tiny_pretraining_dir):
    tokenizer = ThreadSafeTokenizer(AutoTokenizer.from_pretrained(tiny_pretraining_dir))
    for name in ("backend_tokenizer", "_tokenizer"):
        backend = getattr(tokenizer, name)
        assert isinstance(backend, ThreadSafeTokenizer) and backend._lock is tokenizer._lock, name
        backend.enable_truncation(max_length=8)  # what a fast tokenizer's own call does on the shared backend
        assert tokenizer.wrapped.backend_tokenizer.truncation is None, name  # undone as the call returns


def test_a_student_who_leaves_does_not_cost_the_one_who_stays_their_place(admission):
    """Two students wait for the same result; one leaves. The other keeps its place ahead of later requests."""
    engine = Engine(None, admission(1), 10)
    release, blocker = occupy(engine)
    ran: list[str] = []

    def stopped(ahead: int, seconds: float) -> None:
        raise SessionStopped

    with ThreadPoolExecutor(2) as pool:
        staying = pool.submit(engine.run, "shared", lambda: ran.append("shared") or "result", 16)
        until(lambda: engine.admission.queued == 1)
        later = pool.submit(engine.run, "later", lambda: ran.append("later"), 16)
        until(lambda: engine.admission.queued == 2)
        with reporting_waits(stopped), pytest.raises(SessionStopped):
            engine.run("shared", lambda: ran.append("never"), 16)
        release.set()
        assert staying.result(10) == "result" and later.result(10) is None
    blocker.join()
    assert ran == ["shared", "later"]
