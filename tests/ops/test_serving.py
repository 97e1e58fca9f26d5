"""The serving mechanisms behind a cheap cached visit (timings live in scripts/benchmark.py, not here)."""

from __future__ import annotations

import gc
import http.server
import importlib
import os
import re
import socket
import sys
import threading
import tomllib
import urllib.request
from types import SimpleNamespace

import pytest

from bertlens import serving
from bertlens.models import load_model
from bertlens.serving import (
    GC_FREEZE_ENV,
    NODELAY_ENV,
    freeze_long_lived_objects,
    prepare_threads,
    send_small_messages_at_once,
)
from components.services import cache
from components.services import models as model
from scripts import server as server_script
from scripts.server import running_server
from scripts.streamlit_client import Session, run_to_end
from tests.conftest import ROOT


def tracked(obj: object) -> bool:
    """Whether the garbage collector still walks ``obj`` (frozen objects are out of its generations)."""
    return any(o is obj for o in gc.get_objects())


def test_a_loaded_model_is_frozen_out_of_the_collectors_walk(tiny_pretraining_dir):
    bundle = load_model(str(tiny_pretraining_dir))
    layer = bundle.model.bert.encoder.layer[0]
    assert tracked(layer)  # what Streamlit's gc.collect(2) after every run would walk
    freeze_long_lived_objects()
    assert not tracked(layer) and not tracked(bundle.model) and not tracked(bundle)


def test_freezing_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(GC_FREEZE_ENV, "0")
    fresh = [object()]  # a new container the collector tracks
    freeze_long_lived_objects()
    assert tracked(fresh)  # (not a frozen count before and after: frozen objects another thread frees leave it)


def test_the_apps_loading_point_freezes_after_each_load(monkeypatch, tiny_pretraining_dir):
    calls = []
    monkeypatch.setattr(model, "freeze_long_lived_objects", lambda: calls.append(1))
    model.cached_bundle.clear()
    model.cached_bundle(str(tiny_pretraining_dir))
    model.cached_bundle(str(tiny_pretraining_dir))  # a cache hit loads nothing and freezes nothing
    assert calls == [1]
    model.cached_bundle.clear()


def test_a_failed_load_and_its_retries_freeze_nothing_more(monkeypatch, tmp_path):
    """A freeze keeps whatever other sessions' runs hold at that moment in a cycle for good: a failed model retried
    once a minute (hosted) froze them again at each retry. Its fallback is the bundled encoder, frozen once."""
    calls = []
    monkeypatch.setattr(model, "freeze_long_lived_objects", lambda: calls.append(1))
    model.cached_bundle.clear()
    broken = str(tmp_path / "not-a-model")
    for _ in range(3):  # the first attempt loads the bundled encoder (one freeze); each retry reuses it
        assert model.cached_bundle(broken).is_fallback
        assert cache.retry_load(broken, min_interval=0.0) == 0.0
    assert calls == [1]
    model.cached_bundle.clear()


def test_the_shipped_config_is_the_serving_configuration():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server, runner = config["server"], config["runner"]
    assert server["fileWatcherType"] == "none"  # no per-session walk of every module's path
    assert server["enableWebsocketCompression"] is False
    assert server["maxMessageSize"] <= 50 and server["maxUploadSize"] <= 2
    assert config["global"]["disableWidgetStateDuplicationWarning"] is True  # defaults beside set values: on purpose
    assert server["enableStaticServing"] is True  # the charts' plotly.js (static/plotly) and the thumbnails
    assert runner["fastReruns"] is True
    assert runner["postScriptGC"] is False  # a full collection after every run: ~77 % of a class's server time
    assert config["server"]["headless"] is True and config["browser"]["gatherUsageStats"] is False


@pytest.fixture(scope="module")
def first_run_log(tiny_pretraining_dir, tmp_path_factory) -> str:
    """The log of a server started with no OpenMP wait policy of its own (OpenMP's settings printed at load), after
    one visit's run."""
    log = tmp_path_factory.mktemp("first-run") / "server.log"

    async def visit(url: str) -> None:
        async with Session.connect(url, "") as session:
            await session.run()

    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("OMP_WAIT_POLICY", raising=False)
        with running_server(tiny_pretraining_dir, log, OMP_DISPLAY_ENV="VERBOSE") as server:
            run_to_end(visit(server.url))
    return log.read_text()


def test_the_server_loads_torch_with_sleeping_openmp_threads(first_run_log):
    """app.py sets OpenMP's wait policy before torch loads: the server's OpenMP reports, at load, that
    its idle threads spin 0 times before sleeping (300,000 when the policy is unset)."""
    assert "GOMP_SPINCOUNT = '0'" in first_run_log


def nodelay(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_the_servers_connections_send_small_messages_at_once(monkeypatch):
    """Streamlit binds its socket with protocol 0, and asyncio then leaves Nagle's algorithm on: ~40 ms a run."""
    monkeypatch.setattr(serving, "_nagle_off", False)
    with socket.socket() as listener:  # as Streamlit binds it (no protocol given)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname()) as client, listener.accept()[0] as accepted:
            assert nodelay(listener) == nodelay(accepted) == 0
            assert send_small_messages_at_once() >= 2
            with socket.create_connection(listener.getsockname()) as later, listener.accept()[0] as accepted_later:
                assert nodelay(listener) and nodelay(accepted) and nodelay(accepted_later)  # later ones inherit it
                assert nodelay(client) == nodelay(later) == 0  # a connection out of the process is not the server's
    assert send_small_messages_at_once() == 0  # once per process


def test_a_socket_number_reused_since_the_scan_is_left_alone():
    """Connections close while the scan runs: a number that names another socket (or nothing) by now is skipped."""
    with socket.socket() as sock:
        inode = str(os.fstat(sock.fileno()).st_ino)
        assert not serving._no_delay(sock.fileno(), inode + "0") and nodelay(sock) == 0  # another socket's inode
        assert serving._no_delay(sock.fileno(), inode) and nodelay(sock) == 1
    assert not serving._no_delay(10_000, inode)  # a number open no more: no exception


def test_nagle_can_be_left_on(monkeypatch):
    monkeypatch.setattr(serving, "_nagle_off", False)
    monkeypatch.setenv(NODELAY_ENV, "0")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert send_small_messages_at_once() == 0 and nodelay(listener) == 0


def test_a_server_turns_nagle_off_on_its_first_run(first_run_log):
    said = re.findall(r"TCP_NODELAY on (\d+) serving sockets", first_run_log)
    assert len(said) == 1 and int(said[0]) >= 1  # its listener (and the visit's connection), once


def test_an_operators_own_wait_policy_wins(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    prepare_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    monkeypatch.delenv("OMP_WAIT_POLICY")
    prepare_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


def test_a_port_is_never_handed_out_twice(monkeypatch):
    """A cluster's replicas take their ports one after another, each probe socket closed before its server
    binds: the operating system may offer a closed probe's port again."""
    offered = iter([40001, 40001, 40002])

    class Probe:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def bind(self, address):
            return None

        def getsockname(self):
            return ("127.0.0.1", next(offered))

    monkeypatch.setattr(server_script, "socket", SimpleNamespace(socket=Probe))  # this module's sockets only
    monkeypatch.setattr(server_script, "_HANDED_OUT", set())
    assert [server_script.free_port(), server_script.free_port()] == [40001, 40002]


def test_a_package_is_imported_once_however_many_sessions_ask(tmp_path, monkeypatch):
    """Every script run calls import_package; only the first imports the modules (one at a time), the rest return."""
    package = "bertlens_audit_pages"
    folder = tmp_path / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for name in ("first", "second"):
        (folder / f"{name}.py").write_text(f"NAME = {name!r}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(serving, "_imported", set())
    calls: list[str] = []
    real = importlib.import_module
    monkeypatch.setattr(serving.importlib, "import_module", lambda name: calls.append(name) or real(name))
    try:
        sessions = [threading.Thread(target=serving.import_package, args=(folder, package)) for _ in range(6)]
        for session in sessions:
            session.start()
        for session in sessions:
            session.join()
        serving.import_package(folder, package)  # a later run
        assert sorted(calls) == [f"{package}.first", f"{package}.second"]
        assert sys.modules[f"{package}.second"].NAME == "second"
    finally:
        for name in [m for m in sys.modules if m.startswith(package)]:
            del sys.modules[name]


class _Healthy(http.server.BaseHTTPRequestHandler):
    """Another process's server on the port: it answers every health check."""

    def do_GET(self):  # noqa: N802 (the http.server name)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("taker", ["bound", "serving"])
def test_a_server_whose_port_was_taken_starts_on_another(monkeypatch, tmp_path, taker):
    """The port ``free_port`` probed can be taken before Streamlit binds it (an outgoing connection's ephemeral port;
    another test worker's server, which answers health checks while ours exits): the server starts again on another
    port instead of failing the test, or of letting it run against the other server."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))  # bound, not listening: as an outgoing connection's port
        busy = taken.getsockname()[1]
        rival = None
        if taker == "serving":
            taken.close()
            rival = http.server.HTTPServer(("127.0.0.1", busy), _Healthy)
            threading.Thread(target=rival.serve_forever, daemon=True).start()
        ports = iter([busy])
        real = server_script.free_port
        monkeypatch.setattr(server_script, "free_port", lambda: next(ports, None) or real())
        app = tmp_path / "bare.py"
        app.write_text("import streamlit as st\nst.write('hi')\n")
        log = tmp_path / "server.log"
        try:
            with server_script.running_server("unused", log, script=str(app)) as running:
                assert not running.url.endswith(f":{busy}")
                with urllib.request.urlopen(f"{running.url}/_stcore/health", timeout=5) as response:
                    assert response.status == 200
        finally:
            if rival is not None:
                rival.shutdown()
                rival.server_close()
