"""Through app.py: the first run of a tab the reconnect watcher reopened queues its passes ahead of visitors."""

from __future__ import annotations

import threading

from streamlit.testing.v1 import AppTest

from bertlens import engine
from components.ui import reconnect
from tests.conftest import APPTEST_TIMEOUT, ROOT


def test_a_reopened_tabs_first_run_queues_ahead_and_its_next_run_as_a_visitor(monkeypatch, tiny_pretraining_dir):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", str(tiny_pretraining_dir))
    cookie = {reconnect.REOPENED_COOKIE: "1"}  # AppTest sends no cookies: the reload's, as the watcher sets it
    real = reconnect.reopens_lost_view
    monkeypatch.setattr(reconnect, "reopens_lost_view", lambda cookies, done: real(cookie, done))
    asked: list[tuple[str, int]] = []  # (thread, tier) of every engine request
    request = engine.Engine._request

    def recorded(self, key, make):
        asked.append((threading.current_thread().name, engine._tier.get()))
        return request(self, key, make)

    monkeypatch.setattr(engine.Engine, "_request", recorded)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params["text"] = "A view the student had open when its replica died."
    at.switch_page("pages/attention.py").run()
    assert not at.exception
    first_run = [tier for thread, tier in asked if thread == "ScriptRunner.scriptThread"]
    asked.clear()
    at.text_input(key="text").set_value("The student's next sentence, typed after the view came back.").run()
    assert not at.exception
    next_run = [tier for thread, tier in asked if thread == "ScriptRunner.scriptThread"]
    assert first_run and set(first_run) == {engine.REOPENED}
    assert next_run and set(next_run) == {engine.VISITOR}
