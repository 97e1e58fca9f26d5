"""The view reopened after its replica died is computed ahead of the queue, on its first run only."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from streamlit.runtime.scriptrunner import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

from bertlens import engine
from components.ui import reconnect
from components.ui.reconnect import FIRST_RUN_DONE, REOPENED_COOKIE, reopened_view_first, reopens_lost_view


def test_only_the_first_run_of_a_tab_opened_by_the_watchers_reload_counts_as_reopened():
    assert reopens_lost_view({REOPENED_COOKIE: "1"}, first_run_done=False)
    assert not reopens_lost_view({REOPENED_COOKIE: "1"}, first_run_done=True)
    assert not reopens_lost_view({}, first_run_done=False)
    assert not reopens_lost_view({REOPENED_COOKIE: ""}, first_run_done=False)  # the watcher's cleared cookie
    assert not reopens_lost_view({"BERTLENS_REPLICA": "r1"}, first_run_done=False)


@pytest.fixture
def browser_session(monkeypatch):
    """st.context's cookies and st.session_state as a reopened tab's session has them."""
    session: dict = {}
    monkeypatch.setattr(reconnect.st, "context", SimpleNamespace(cookies={REOPENED_COOKIE: "1"}))
    monkeypatch.setattr(reconnect.st, "session_state", session)
    return session


def test_the_reopened_views_first_run_queues_ahead_and_later_runs_queue_as_visitors(browser_session):
    tiers = []
    for _ in range(2):
        with reopened_view_first():
            tiers.append(engine._tier.get())
    assert tiers == [engine.REOPENED, engine.VISITOR]
    assert engine._tier.get() == engine.VISITOR  # nothing leaks out of the run


def test_a_first_run_cut_short_by_the_next_click_keeps_the_place_and_one_stopped_by_the_page_ends_it(browser_session):
    with pytest.raises(RerunException), reopened_view_first():
        raise RerunException(RerunData())  # the student typed before the view was drawn
    assert FIRST_RUN_DONE not in browser_session
    with pytest.raises(StopException), reopened_view_first():
        assert engine._tier.get() == engine.REOPENED  # the run that replaced it still goes first
        raise StopException  # the page stopped (st.stop): it was drawn as far as it goes
    assert browser_session[FIRST_RUN_DONE]
    with reopened_view_first():
        assert engine._tier.get() == engine.VISITOR


def test_the_watcher_sets_the_cookie_before_its_reload_and_clears_it_once_the_page_is_back():
    script = reconnect.RELOAD_ON_RECONNECT
    assert "COOKIE" not in script
    installed_at = script.index("window.bertlensReloadOnReconnect = true")  # once per page load, after its handshake
    set_at, reload_at = script.index(f'"{REOPENED_COOKIE}=1;'), script.index("window.location.reload()")
    clear_at = script.index(f'"{REOPENED_COOKIE}=; max-age=0;')
    assert installed_at < clear_at < set_at < reload_at
