"""A page waiting for a busy model shows its place in the queue, and a request over the time budget
ends in a message naming the limit."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from bertlens.analysis import model_engine
from bertlens.engine import REQUEST_SECONDS_ENV
from components.services import models as model_component
from components.services.models import cached_bundle, queue_message
from tests.conftest import drawn_charts


@pytest.fixture
def busy_model(tiny_pretraining_dir):
    """The tiny model's engine kept busy by another request until the test releases it."""
    engine = model_engine(cached_bundle(str(tiny_pretraining_dir)))
    started, release = threading.Event(), threading.Event()

    def block() -> None:
        started.set()
        release.wait(30)

    thread = threading.Thread(target=engine.run, args=(("busy", id(release)), block, 0))
    thread.start()
    assert started.wait(10)
    yield release
    release.set()
    thread.join()


def test_queue_message():
    assert queue_message(2, 3.2) == "The model is busy: 2 requests ahead of you, about 3 s."
    assert queue_message(1, 0.1) == "The model is busy: 1 request ahead of you, about 1 s."
    assert queue_message(0, 4) == "Running the model… about 4 s left."


def test_the_notice_is_redrawn_when_the_place_changes_else_every_two_seconds(monkeypatch):
    clock, drawn = [100.0], []
    monkeypatch.setattr(model_component.time, "monotonic", lambda: clock[0])
    notice = model_component.QueueNotice()
    notice.slot = SimpleNamespace(info=lambda text, icon: drawn.append(text))
    for ahead, seconds, later in [(2, 5.0, 0.0), (2, 4.5, 0.5), (1, 4.0, 0.5), (1, 3.5, 0.5), (1, 1.0, 2.0)]:
        clock[0] += later
        notice(ahead, seconds)
    assert drawn == [queue_message(2, 5.0), queue_message(1, 4.0), queue_message(1, 1.0)]


def test_a_waiting_page_shows_its_place_then_its_result(tiny_pretraining_dir, open_page, busy_model, monkeypatch):
    shown = []
    real_call = model_component.QueueNotice.__call__

    def record(notice, ahead, seconds):
        shown.append(queue_message(ahead, seconds))
        if len(shown) == 3:  # seen for a while (updates ~2x/s): let the busy request finish
            busy_model.set()
        real_call(notice, ahead, seconds)

    monkeypatch.setattr(model_component.QueueNotice, "__call__", record)
    at = open_page("pages/attention.py", tiny_pretraining_dir, text="A queue notice test sentence.")
    assert not at.exception and not at.error
    assert shown[0].startswith("The model is busy: 1 request ahead of you")
    assert not [i for i in at.info if "ahead of you" in i.value]  # cleared once the result is there
    assert drawn_charts(at)  # the page went on to draw the attention


def test_a_request_over_the_time_budget_says_so(tiny_pretraining_dir, open_page, busy_model, monkeypatch):
    monkeypatch.setenv(REQUEST_SECONDS_ENV, "0.6")
    at = open_page("pages/attention.py", tiny_pretraining_dir, text="A sentence that waits too long.")
    assert not at.exception
    [error] = at.error
    assert "0.6 s" in error.value and REQUEST_SECONDS_ENV in error.value
