"""Replicas forked from one process that has already imported torch, transformers and Streamlit.

Each ``streamlit run app.py`` replica imports the same libraries: ~370 MiB of private memory per process
before any model is loaded (measured: torch 140, transformers 130, Streamlit 30, plotly/scikit-learn/pandas
60). The model's weights are memory-mapped and already shared between replicas; those imports were not.
``Launcher`` starts one small Python process (``python -m scripts.preloaded``) that imports them once, moves
everything it holds out of the garbage collector's reach (``gc.freeze``, so no collection in a child writes
to those pages) and then, on request, forks a replica. The replicas share the imported pages copy-on-write
until they write to them.

The launcher process stays single-threaded and never runs a torch operation (OpenMP's thread pool does
not survive a fork); it reaps its children and reports their exits. Each replica is a normal
``streamlit run`` from there on: its own session (process group), its own log, told to stop if the launcher
dies. ``scripts/serve.py`` uses this on Linux; elsewhere, or with ``--separate-processes``, it starts each
replica as its own process.

Protocol (JSON lines): request ``{"request": id, "argv": [...], "log": path}`` on stdin; answers
``{"request": id, "started": pid}`` or ``{"request": id, "failed": message}``, and at any time
``{"exited": pid, "returncode": code}``, on the launcher's original stdout (anything the libraries print
goes to its stderr instead).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import itertools
import json
import os
import random
import selectors
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from bertlens.serving import prepare_threads  # sets environment variables only: torch is not loaded here

ROOT = Path(__file__).resolve().parents[1]
# What every replica imports anyway (app.py's pages, on their first visit): the third-party libraries and
# BERT Lens's Streamlit-free core. Not the Streamlit pages and components: they read Streamlit's
# configuration, which each replica must parse from its own command line.
PRELOAD = (
    "torch",
    "transformers",
    "transformers.models.bert.modeling_bert",
    "transformers.models.bert.tokenization_bert",
    "streamlit",
    "streamlit.web.cli",
    "streamlit.web.bootstrap",
    "plotly.graph_objects",
    "plotly.io",
    "sklearn.decomposition",
    "sklearn.metrics.pairwise",
    "pandas",
    "bertlens.analysis",
    "bertlens.models",
    "bertlens.senses",
)


def die_with_parent() -> None:
    """In a child: SIGTERM when its parent dies, however it dies (Linux ``PR_SET_PDEATHSIG``; else a no-op)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


# --------------------------------------------------------------------------- in serve.py's process


class LaunchedProcess:
    """A replica forked by the launcher: the part of ``subprocess.Popen`` that serve.py uses."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None
        self._exited = threading.Event()

    def _exit(self, returncode: int) -> None:
        self.returncode = returncode
        self._exited.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._exited.wait(timeout):
            raise subprocess.TimeoutExpired(f"replica {self.pid}", timeout or 0.0)
        assert self.returncode is not None
        return self.returncode


class Launcher:
    """The preloaded process, started on first use with ``env`` (the replicas' environment: it is read by
    torch and transformers at import, so it is fixed for every replica this launcher starts)."""

    def __init__(self, env: dict[str, str], log: Path):
        self.env, self.log = env, log
        self._process: subprocess.Popen[str] | None = None
        self._children: dict[int, LaunchedProcess] = {}
        self._answers: dict[int, dict[str, Any]] = {}  # request id -> the launcher's answer
        self._requests = itertools.count(1)
        self._lock = threading.Lock()  # one request at a time
        self._state = threading.Condition()  # guards _children and _answers

    @property
    def process(self) -> subprocess.Popen[str] | None:
        return self._process

    def _ensure_running(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            with self.log.open("a") as err:
                self._process = subprocess.Popen(
                    [sys.executable, "-m", "scripts.preloaded"], cwd=ROOT, env=self.env, stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1, start_new_session=True,
                    preexec_fn=die_with_parent,
                )  # fmt: skip
            threading.Thread(target=self._read, args=(self._process,), daemon=True, name="launcher-reader").start()
        return self._process

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            try:
                message = json.loads(line)
            except ValueError:  # not the protocol (the launcher keeps its own output off this pipe)
                continue
            with self._state:
                if "exited" in message:
                    child = self._children.pop(message["exited"], None)
                    if child is not None:
                        child._exit(message["returncode"])
                else:
                    if "started" in message:  # registered here, so that its exit cannot arrive first
                        message["child"] = self._children[message["started"]] = LaunchedProcess(message["started"])
                    self._answers[message["request"]] = message
                    self._state.notify_all()
        process.wait()
        # The launcher is gone; each replica got SIGTERM with it (PR_SET_PDEATHSIG). Reported once gone.
        with self._state:
            orphans, self._children = list(self._children.values()), {}
            self._state.notify_all()
        deadline = time.monotonic() + 30
        for child in orphans:
            while _exists(child.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            child._exit(-signal.SIGTERM)

    def start(self, argv: list[str], log: Path, timeout: float = 120.0) -> LaunchedProcess:
        """Fork a replica running ``argv`` (a ``python -c LAUNCHER args…`` command) with output to ``log``."""
        with self._lock:
            process = self._ensure_running()
            request = next(self._requests)
            try:
                assert process.stdin is not None
                process.stdin.write(json.dumps({"request": request, "argv": argv, "log": str(log)}) + "\n")
                process.stdin.flush()
            except OSError as error:  # it died just now: the caller retries as for any failed start
                raise RuntimeError(f"the replica launcher is gone ({error}); see {self.log}") from error
            with self._state:
                answered = self._state.wait_for(lambda: request in self._answers or process.poll() is not None, timeout)
                answer = self._answers.pop(request, None)
            if answer is None:
                why = "exited" if answered else f"did not answer in {timeout:.0f} s"
                raise RuntimeError(f"the replica launcher {why}; see {self.log}")
            if "failed" in answer:
                raise RuntimeError(f"{answer['failed']}; see {self.log}")
            child: LaunchedProcess = answer["child"]
            return child

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=10)
            if self._process.poll() is None:
                self._process.kill()
                self._process.wait()


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


# --------------------------------------------------------------------------- the launcher process


_protocol: TextIO | None = None  # the launcher's answers to serve.py: its stdout pipe, kept off fd 1


def _send(message: dict[str, int | str]) -> None:
    assert _protocol is not None
    _protocol.write(json.dumps(message) + "\n")
    _protocol.flush()


def _reap() -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send({"exited": pid, "returncode": os.waitstatus_to_exitcode(status)})


def _become_replica(argv: list[str], log: str, launcher: int) -> None:
    """In the forked child: a session of its own, output to ``log``, then ``python -c <code> args…`` as if run."""
    assert _protocol is not None
    _protocol.close()  # only the launcher answers serve.py; its pipe must close when the launcher dies
    os.setsid()
    die_with_parent()  # the parent is the launcher
    if os.getppid() != launcher:  # the launcher died before the line above: nobody would stop this replica
        os._exit(1)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.close(null)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own descriptors, for its whole life
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    random.seed()  # not the launcher's sequence, shared by every replica
    if argv[1] != "-c":
        raise ValueError(f"a replica is started from `python -c CODE args…`, not {argv[:2]}")
    sys.argv = ["-c", *argv[3:]]
    # Not an import hack for this module: the replica imports as one started as its own process does (`python -c
    # CODE` in ROOT, as with --separate-processes): "" (the working directory) first on its path, and not the
    # launcher's own first entry (ROOT, put there by `python -m scripts.preloaded`).
    sys.path = ["", *(entry for entry in sys.path if entry != str(ROOT))]
    exec(compile(argv[2], "<replica>", "exec"), {"__name__": "__main__"})  # exits through SystemExit


def serve() -> None:
    """The launcher's loop: fork a replica per request, report exits. Never returns in a replica."""
    global _protocol
    _protocol = os.fdopen(os.dup(1), "w", buffering=1)  # answers go here; anything else printed goes to stderr
    os.dup2(2, 1)
    os.chdir(ROOT)
    prepare_threads()  # before torch loads, as app.py does
    for name in PRELOAD:
        importlib.import_module(name)
    gc.collect()
    gc.freeze()
    if threading.active_count() != 1:  # a fork copies only the calling thread: nothing may run beside it
        raise RuntimeError(f"the launcher must be single-threaded to fork, has {threading.enumerate()}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    launcher = os.getpid()
    selector = selectors.DefaultSelector()
    selector.register(sys.stdin, selectors.EVENT_READ)
    while True:
        _reap()
        if not selector.select(timeout=0.2):
            continue
        line = sys.stdin.readline()
        if not line:  # serve.py closed the pipe: it is gone
            return
        request = json.loads(line)
        try:
            pid = os.fork()
        except OSError as error:
            _send({"request": request["request"], "failed": f"fork failed: {error}"})
            continue
        if pid == 0:
            selector.close()
            _become_replica(request["argv"], request["log"], launcher)
            os._exit(1)  # not reached: the replica leaves through SystemExit
        _send({"request": request["request"], "started": pid})


if __name__ == "__main__":
    serve()
