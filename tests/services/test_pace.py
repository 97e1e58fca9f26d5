"""A tab asking for page runs faster than its budget waits before each, and is told so (``app.py``)."""

from __future__ import annotations

import types

import pytest
from streamlit.testing.v1 import AppTest

import components.services.pace
from tests.conftest import APPTEST_TIMEOUT, BUNDLED_MODEL, ROOT


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The waits before runs, recorded instead of slept; the clock stands still (every run comes at once)."""
    slept: list[float] = []
    clock = types.SimpleNamespace(monotonic=lambda: 0.0, sleep=slept.append)
    monkeypatch.setattr(components.services.pace, "time", clock)
    return slept


def tab(monkeypatch, **env: str) -> AppTest:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)


def test_a_tab_over_its_runs_a_minute_waits_and_is_told_which_limit(monkeypatch, waits):
    at = tab(monkeypatch, BERTLENS_MAX_RUNS_PER_MINUTE="12")  # 2 runs at once, then one every 5 s
    for _ in range(2):
        at.run()
        assert not at.exception and not at.toast and waits == []
    at.run()
    assert not at.exception and waits == [pytest.approx(5.0)]
    (toast,) = at.toast
    assert "waits 5.0 s" in toast.value and "at most 12 page runs a minute for one browser tab" in toast.value
    assert "`BERTLENS_MAX_RUNS_PER_MINUTE`" in toast.value
    assert at.title and at.title[0].value  # and then the page itself is drawn


def test_hosted_tabs_are_paced_strictly_and_local_ones_generously(monkeypatch, waits):
    hosted = tab(monkeypatch, BERTLENS_HOSTED="1", BERTLENS_ALLOWED_MODELS=BUNDLED_MODEL)
    for _ in range(21):
        hosted.run()
    assert waits == [pytest.approx(0.5)]  # 120 a minute, 20 at once: the 21st run waits
    monkeypatch.delenv("BERTLENS_HOSTED")
    local = tab(monkeypatch)
    for _ in range(25):
        local.run()
    assert waits == [pytest.approx(0.5)] and not local.exception  # 1,200 a minute: nobody waits ...
    assert local.session_state[components.services.pace.PACE].burst == 200  # ... before the 201st run at once
