"""A real ``streamlit run app.py`` server on a free local port (the browser, concurrency and class-load
tests, ``scripts/class_load.py`` and the benchmarks).

The server logs BERT Lens's own ``bertlens`` logger (each model load) to its log file, so a caller
can count loads inside the server process (``model_loads``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START_SECONDS = 90
# Streamlit configures only its own loggers; this shows bertlens's INFO lines as well.
LAUNCHER = """
import logging, sys
handler = logging.StreamHandler(sys.stderr)
handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
logging.getLogger("bertlens").addHandler(handler)
logging.getLogger("bertlens").setLevel(logging.INFO)
from streamlit.web import cli
sys.argv = ["streamlit", *sys.argv[1:]]
sys.exit(cli.main())
"""
LOAD_LINE = "bertlens INFO Loading model"
PORT_TAKEN = "Port {port} is not available"  # Streamlit's words when it cannot bind its port
LISTENING = "URL: {url}"  # and its words once it has bound it (with --server.address)
PORT_ATTEMPTS = 3


@dataclass(frozen=True)
class Server:
    url: str  # http://127.0.0.1:port
    pid: int
    log: Path


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port free on 127.0.0.1 now, and never one this process was given before: each probe socket closes
    before its server binds, so servers started together (a cluster's replicas) could otherwise share one."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def _wait_healthy(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"streamlit exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200 and listening(log, url):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"streamlit did not become healthy in {START_SECONDS} s:\n{log.read_text()[-3000:]}")


def server_environment(model: str | Path, **env: str) -> dict[str, str]:
    """This process's environment with ``BERTLENS_MODEL=model``, offline; ``BERTLENS_HOSTED`` only if in ``env``."""
    server_env = {**os.environ, "BERTLENS_MODEL": str(model), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **env}
    if "BERTLENS_HOSTED" not in env:
        server_env.pop("BERTLENS_HOSTED", None)
    return server_env


def streamlit_command(port: int, script: str = "app.py", watcher: str = "none", *options: str) -> list[str]:
    """``streamlit run script`` headless on 127.0.0.1:port (with bertlens's log lines); ``options``: more flags."""
    return [
        sys.executable, "-c", LAUNCHER, "run", script,
        "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", watcher, *options,
    ]  # fmt: skip


@contextmanager
def running_server(
    model: str | Path, log: Path, script: str = "app.py", watcher: str = "none", **env: str
) -> Iterator[Server]:
    """Run ``script`` headless with ``BERTLENS_MODEL=model`` (offline) on 127.0.0.1; stop it afterwards.

    ``env`` adds environment variables; ``BERTLENS_HOSTED`` is off unless given there. ``watcher`` is
    Streamlit's ``server.fileWatcherType`` (the shipped config's "none"; "auto" is Streamlit's default).
    """
    for attempt in range(1, PORT_ATTEMPTS + 1):
        port = free_port()
        with log.open("w") as out:
            server = subprocess.Popen(streamlit_command(port, script, watcher), cwd=ROOT, env=server_environment(model, **env),
                                      stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, server, log)
            break
        except BaseException as error:  # a stopped run (Ctrl+C, a test's timeout) stops its server too
            _stop(server)
            if not isinstance(error, RuntimeError) or not another_port_worth_trying(log, port, attempt):
                raise
    try:
        yield Server(url, server.pid, log)
    finally:
        _stop(server)


def listening(log: Path, url: str) -> bool:
    """Whether the server logging to ``log`` has bound ``url``'s port itself: a health check's answer can come from
    another process that took the port first, while this one is about to exit for want of it."""
    return LISTENING.format(url=url) in log.read_text()


def another_port_worth_trying(log: Path, port: int, attempt: int) -> bool:
    """Whether a server that failed to start should start again on another port: it exited because ``port`` was
    taken after ``free_port`` probed it (by another process probing at the same moment, a test worker, or an
    outgoing connection's ephemeral port), and attempt ``attempt`` of PORT_ATTEMPTS was not the last."""
    return attempt < PORT_ATTEMPTS and PORT_TAKEN.format(port=port) in log.read_text()


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


@contextmanager
def streamlit_server(model: str | Path, log: Path, **env: str) -> Iterator[str]:
    """``running_server``, yielding just its base URL."""
    with running_server(model, log, **env) as server:
        yield server.url


def model_loads(log: Path) -> list[str]:
    """The 'Loading model …' lines the server logged."""
    return [line for line in log.read_text().splitlines() if line.startswith(LOAD_LINE)]


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """User + system CPU time so far of a process (all its threads), or of one of its threads."""
    stat = Path(f"/proc/{pid}/task/{thread}/stat" if thread else f"/proc/{pid}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds(pid: int) -> dict[int, float]:
    """CPU time so far of each thread of a process alive now (thread id → seconds)."""
    found = {}
    for name in os.listdir(f"/proc/{pid}/task"):
        try:
            found[int(name)] = cpu_seconds(pid, int(name))
        except OSError:  # ended meanwhile
            continue
    return found


def peak_rss_bytes(pid: int) -> int | None:
    """The process's peak resident memory so far (Linux ``VmHWM``), or None when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
