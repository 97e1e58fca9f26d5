"""A real ``streamlit run app.py`` server on a free local port, for the browser and concurrency tests.

The server logs BERT Lens's own ``bertlens`` logger (each model load) to its log file, so a test
can count loads inside the server process.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tests.conftest import ROOT

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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"streamlit exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"streamlit did not become healthy in {START_SECONDS} s:\n{log.read_text()[-3000:]}")


@contextmanager
def streamlit_server(model: str | Path, log: Path, **env: str) -> Iterator[str]:
    """Run ``app.py`` headless with ``BERTLENS_MODEL=model`` (offline); yield its base URL."""
    port = free_port()
    server_env = {**os.environ, "BERTLENS_MODEL": str(model), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **env}
    if "BERTLENS_HOSTED" not in env:
        server_env.pop("BERTLENS_HOSTED", None)
    command = [
        sys.executable, "-c", LAUNCHER, "run", "app.py",
        "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with log.open("w") as out:
        server = subprocess.Popen(command, cwd=ROOT, env=server_env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, server, log)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def model_loads(log: Path) -> list[str]:
    """The 'Loading model …' lines the server logged."""
    return [line for line in log.read_text().splitlines() if line.startswith("bertlens INFO Loading model")]
