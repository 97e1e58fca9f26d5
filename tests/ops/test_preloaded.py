"""scripts/preloaded.py: the launcher that forks replicas after importing the heavy libraries once."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from scripts.preloaded import Launcher

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the launcher forks (Linux)")
SLEEPER = [sys.executable, "-c", "import sys, time; print('replica', sys.argv[1:], flush=True); time.sleep(60)", "a"]


def test_replicas_report_their_exit_and_a_dead_launcher_is_replaced(tmp_path: Path):
    launcher = Launcher(dict(os.environ), tmp_path / "launcher.log")
    try:
        first = launcher.start(SLEEPER, tmp_path / "first.log")
        assert first.poll() is None
        os.kill(first.pid, signal.SIGKILL)
        assert first.wait(10) == -signal.SIGKILL  # the launcher reaped it and said how it ended

        second = launcher.start(SLEEPER, tmp_path / "second.log")
        assert launcher.process is not None
        os.kill(launcher.process.pid, signal.SIGKILL)  # the launcher dies: its replica gets SIGTERM
        assert second.wait(40) == -signal.SIGTERM
        assert not Path(f"/proc/{second.pid}").exists()  # reported only once really gone

        third = launcher.start(SLEEPER, tmp_path / "third.log")  # a new launcher, and the answer is this start's
        assert third.poll() is None and third.pid not in (first.pid, second.pid)
        log = tmp_path / "third.log"
        deadline = time.monotonic() + 20
        while "replica" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "replica ['a']" in log.read_text()  # it ran as `python -c CODE a`, its output in its own log
    finally:
        launcher.stop()
