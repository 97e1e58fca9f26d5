"""BERT Lens for a lecture hall: N replicas of ``streamlit run app.py`` behind HAProxy on one public port.

    python -m scripts.serve --replicas 3 --port 8501      # prints the one link; Ctrl+C or SIGTERM stops everything
    kill -HUP <serve.py's pid>                            # rolling restart: one replica at a time
    python -m scripts.serve --render --bind :8501 --server app1:8501 --server app2:8501   # the config only

Each replica is a normal ``streamlit run app.py`` on its own 127.0.0.1 port, with its own model bundle
(the model named by ``BERTLENS_MODEL`` or ``--model``; every other ``BERTLENS_*`` setting is passed
through). On Linux the replicas are forked from one launcher that imported torch, transformers and
Streamlit once (``scripts/preloaded.py``), so they share those ~0.3 GiB instead of each holding its own
copy; ``--separate-processes`` starts each as its own process instead. HAProxy runs
``deploy/haproxy.cfg`` with only its addresses filled in: cookie affinity, readiness checks on Streamlit's
``/_stcore/script-health-check`` (which loads the model before a replica gets a student), a header naming
the replica that served.

The replicas share one live-class store (``BERTLENS_CLASS_STORE``, docs/live-class.md): the database that variable
names, else a PostgreSQL server this script starts for them (``scripts/postgres.py``: Debian's ``postgresql``
package, on 127.0.0.1 and a Unix socket, fsync on) and stops with them; the live classes it held end then.

A replica that dies is taken out of HAProxy (maintenance); its students' browsers reconnect to another
replica and get the same view back (it lives in the URL). Once they have (``--restart-delay``, 20 s; at once
if no other replica is alive), it is started again on the same port, warmed, and put back. A rolling restart
takes each replica out, starts it again, warms it and puts it back, one after the other. Every child runs in
its own process group, stopped as a group, and is told to stop if this process dies (Linux
``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bertlens.settings import CLASS_STORE_ENV_VAR, FORWARDED_FOR_ENV_VAR
from scripts.postgres import binaries, missing, postmaster_pid, running_postgres
from scripts.preloaded import LaunchedProcess, Launcher, die_with_parent
from scripts.server import (
    PORT_ATTEMPTS,
    another_port_worth_trying,
    free_port,
    listening,
    streamlit_command,
)
from scripts.streamlit_client import Session, run_to_end

ROOT = Path(__file__).resolve().parents[1]

TEMPLATE = ROOT / "deploy" / "haproxy.cfg"
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
BACKEND = "replicas"  # the backend's name in deploy/haproxy.cfg
READY_PATH = "/_stcore/script-health-check"  # 200 once app.py ran without error: the model is loaded
REPLICA_OPTIONS = ("--server.scriptHealthCheckEnabled", "true")
START_SECONDS = 180  # a replica's start and model load (bert-large from a cold disk included)
STOP_SECONDS = 10  # SIGTERM, then SIGKILL, per process group
RESTART_SPACING = 10.0  # a replica that keeps dying is started at most this often
# A dead replica is started again this long after it died while another replica serves: first its students reopen
# their views there; a new replica's start (model load, warm-up passes) on the same cores slowed that. Measured
# here (2 replicas, 60 students, one killed): every student restored within 15 s in 2 of 3 runs (p50 8.5–9.2 s,
# max 14.0–16.0 s) when it started at once; in 6 of 6 (p50 4.3–6.7 s, max 12.9–15.0 s) when it started 20–25 s later.
RESTART_DELAY = 20.0
PRELOAD_DEFAULT = sys.platform == "linux"  # forking a preloaded process: Linux (fork, PR_SET_PDEATHSIG)


def render_config(bind: str, servers: Sequence[str], admin_socket: str, template: str | None = None) -> str:
    """``deploy/haproxy.cfg`` with its addresses filled in: replica ``i`` (from 1) is ``server r<i> <address>``."""
    lines = "\n".join(f"    server r{i} {address} cookie r{i}" for i, address in enumerate(servers, start=1))
    text = TEMPLATE.read_text() if template is None else template
    for placeholder, value in (("{{BIND}}", bind), ("{{ADMIN_SOCKET}}", admin_socket), ("{{SERVERS}}", lines)):
        if text.count(placeholder) != 1:
            raise ValueError(f"the HAProxy template must name {placeholder} exactly once")
        text = text.replace(placeholder, value)
    return text


def start_group(command: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``command`` in a new process group (its own session), output appended to ``log``."""
    with log.open("a") as out:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=die_with_parent)  # fmt: skip


def stop_group(process: subprocess.Popen[bytes] | LaunchedProcess, seconds: float = STOP_SECONDS) -> None:
    """SIGTERM the process's whole group, then SIGKILL whatever is left after ``seconds``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:  # the group is gone
            break
        try:
            process.wait(timeout=seconds)
            os.killpg(process.pid, 0)  # the leader exited: does anything of its group remain?
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            break
    process.poll()


def warm_every_page(url: str, timeout: float = START_SECONDS) -> None:
    """Open every page of the app once, one after the other, in one session on ``url``.

    A fresh replica imports each page's modules on its first visit. When several students' script threads
    do that at once (a class arriving, or the students of a dead replica reconnecting), Python's import
    locks can fail them: measured here, "cannot import name 'prediction_views' from 'components'" and
    "_DeadlockError … sklearn.metrics.pairwise". Visiting each page first, alone, imports everything.
    """

    async def visit() -> None:
        async with Session.connect(url, "") as session:
            await session.run(timeout=timeout)
            for page in [p for p in session.page_hashes if p]:
                run = await session.open(page, timeout=timeout)
                if run.exceptions:
                    raise RuntimeError(f"{url}/{page}: {run.exceptions[0].message[:500]}")

    run_to_end(visit())


def http_status(url: str, timeout: float) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


class Balancer:
    """HAProxy's runtime API on its admin socket."""

    def __init__(self, socket_path: Path):
        self.socket_path = socket_path

    def command(self, line: str) -> str:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(self.socket_path))
            sock.sendall(line.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def _stat(self, column: str) -> dict[str, str]:
        """One column of HAProxy's ``show stat``, per replica."""
        lines = self.command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","))) for line in lines[1:] if line]
        return {
            row["svname"]: row[column]
            for row in rows
            if row["pxname"] == BACKEND and row["svname"] not in ("FRONTEND", "BACKEND")
        }

    def states(self) -> dict[str, str]:
        """Each replica's status as HAProxy sees it ("UP", "DOWN", "MAINT", "UP 1/2", …)."""
        return self._stat("status")

    def sessions(self) -> dict[str, int]:
        """Each replica's open sessions (``scur``: a tab's websocket is one)."""
        return {name: int(count or 0) for name, count in self._stat("scur").items()}

    def set_state(self, server: str, state: str) -> None:
        """``state``: "maint" (no traffic at all), "drain" (only its own sessions) or "ready"."""
        answer = self.command(f"set server {BACKEND}/{server} state {state}").strip()
        if answer:
            raise RuntimeError(f"HAProxy refused 'set server {server} state {state}': {answer}")


class NoClassStore(RuntimeError):
    """The replicas would have no shared live-class store: PostgreSQL is not installed and none was named."""


@dataclass(frozen=True)
class ClassStore:
    env: dict[str, str]  # the replicas' environment, ``BERTLENS_CLASS_STORE`` set
    pid: int | None  # the PostgreSQL server started here (None: the one named)
    url: str | None  # its URL (None: the one named, not repeated: it may hold a password)


@contextmanager
def class_store(env: dict[str, str], durable: bool = True) -> Iterator[ClassStore]:
    """The replicas' shared store: ``BERTLENS_CLASS_STORE`` as set, else a PostgreSQL server of this process's own,
    stopped (and its folder deleted) at the end; ``NoClassStore`` saying what to install or set without one."""
    if (env.get(CLASS_STORE_ENV_VAR) or "").strip():
        yield ClassStore(env, None, None)
        return
    problem, bin_dir = missing(), binaries()
    if problem is not None or bin_dir is None:
        raise NoClassStore(
            f"The replicas keep their live classes in PostgreSQL, but {problem}. Install it "
            f"(apt-get install postgresql), or set {CLASS_STORE_ENV_VAR} to a postgresql:// URL of a database."
        )
    with running_postgres(bin_dir, durable=durable) as server:
        url = server.create_database("bertlens")
        yield ClassStore({**env, CLASS_STORE_ENV_VAR: url}, postmaster_pid(server), url)


class Stopped(Exception):
    """A stop was asked for while waiting (start-up, restart)."""


@dataclass
class Replica:
    name: str  # r1, r2, … (HAProxy's server name, the cookie value and the X-BertLens-Replica header)
    port: int
    log: Path
    process: subprocess.Popen[bytes] | LaunchedProcess | None = None
    started: float = 0.0
    restarts: int = 0
    found_dead: float | None = None  # when replace_dead first saw it exited

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class Cluster:
    """The replicas and HAProxy; ``with Cluster(...) as cluster:`` starts them all and stops them all."""

    replicas: int
    port: int
    workdir: Path
    bind_address: str = "0.0.0.0"
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    stopping: Callable[[], bool] = lambda: False  # checked while waiting: a stop request ends the wait
    # Fork the replicas from one process that imported the libraries once (scripts/preloaded.py): they share
    # those pages. False: each replica is its own `streamlit run` process.
    preload: bool = PRELOAD_DEFAULT
    restart_delay: float = RESTART_DELAY
    store_pid: int | None = None  # the PostgreSQL server started for the replicas (``class_store``), for state.json
    members: list[Replica] = field(default_factory=list)
    haproxy: subprocess.Popen[bytes] | None = None

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.balancer = Balancer(self.workdir / "haproxy.sock")
        self.members = [Replica(f"r{i}", free_port(), self.workdir / f"r{i}.log") for i in range(1, self.replicas + 1)]
        self.launcher = Launcher(self.replica_env(), self.workdir / "launcher.log") if self.preload else None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.bind_address in ("0.0.0.0", "127.0.0.1", "") else self.bind_address
        return f"http://{host}:{self.port}"

    def replica_env(self) -> dict[str, str]:
        """The replicas' environment: torch threads split between replicas, unless set (2 cores, 2 replicas: 1 each);
        a client's address read from the X-Forwarded-For that this HAProxy sets (deploy/haproxy.cfg)."""
        env = {**self.env, "PYTHONUNBUFFERED": "1"}
        env.setdefault(FORWARDED_FOR_ENV_VAR, "1")
        env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // self.replicas)))
        return env

    def start_replica(self, replica: Replica) -> None:
        command = streamlit_command(replica.port, "app.py", "none", *REPLICA_OPTIONS)
        if self.launcher is not None:
            replica.process = self.launcher.start(command, replica.log)
        else:
            replica.process = start_group(command, replica.log, self.replica_env())
        replica.started = time.monotonic()
        self.write_state()

    def wait_ready(self, replica: Replica, seconds: float = START_SECONDS) -> None:
        """Until the replica's script health check passes (its first call loads the model)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.stopping():
                raise Stopped
            if not replica.alive:
                raise RuntimeError(f"{replica.name} exited:\n{replica.log.read_text()[-3000:]}")
            if http_status(replica.url + READY_PATH, timeout=65) == 200 and listening(replica.log, replica.url):
                return
            time.sleep(0.5)
        raise RuntimeError(f"{replica.name} was not ready in {seconds:.0f} s:\n{replica.log.read_text()[-3000:]}")

    def wait_ready_on_a_free_port(self, replica: Replica) -> None:
        """``wait_ready``, starting the replica again on another free port when its own was taken before it bound it
        (before HAProxy's config names the ports; a restart keeps its port)."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                return self.wait_ready(replica)
            except RuntimeError:
                if replica.alive or not another_port_worth_trying(replica.log, replica.port, attempt):
                    raise
            replica.port = free_port()
            self.start_replica(replica)

    def wait_balancer(self, want: dict[str, str], seconds: float = START_SECONDS) -> None:
        """Until HAProxy reports each named replica in exactly the wanted status ("UP", "MAINT").

        A replica HAProxy has not yet checked shows as "UP 1/2" (one failed check from DOWN): not yet."""
        deadline = time.monotonic() + seconds
        states: dict[str, str] = {}
        while time.monotonic() < deadline:
            if self.stopping():
                raise Stopped
            if self.haproxy is None or self.haproxy.poll() is not None:
                raise RuntimeError(f"HAProxy exited:\n{(self.workdir / 'haproxy.log').read_text()[-3000:]}")
            try:
                states = self.balancer.states()
            except OSError:  # the admin socket is not there yet
                states = {}
            if all(states.get(name) == status for name, status in want.items()):
                return
            time.sleep(0.2)
        raise RuntimeError(f"HAProxy did not report {want} in {seconds:.0f} s (last: {states})")

    def start(self) -> None:
        for replica in self.members:
            self.start_replica(replica)
        for replica in self.members:  # before HAProxy exists: no student reaches a replica still warming
            self.wait_ready_on_a_free_port(replica)
            warm_every_page(replica.url)
        config = self.workdir / "haproxy.cfg"
        config.write_text(render_config(f"{self.bind_address}:{self.port}", [f"127.0.0.1:{r.port}" for r in self.members],
                                        str(self.balancer.socket_path)))  # fmt: skip
        check = subprocess.run([HAPROXY, "-c", "-q", "-f", str(config)], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"HAProxy rejected {config}:\n{check.stdout}{check.stderr}")
        self.haproxy = start_group([HAPROXY, "-db", "-f", str(config)], self.workdir / "haproxy.log", dict(os.environ))
        # HAProxy's own readiness checks load each replica's model; the link works once all are up.
        self.wait_balancer({r.name: "UP" for r in self.members})
        self.write_state()

    def restart(self, replica: Replica) -> None:
        """Out of HAProxy (its students go elsewhere), stopped, started on the same port, warmed, back in."""
        self.balancer.set_state(replica.name, "maint")
        if replica.process is not None:
            stop_group(replica.process)
        self.start_replica(replica)
        replica.restarts, replica.found_dead = replica.restarts + 1, None
        try:
            self.wait_ready(replica)
            warm_every_page(replica.url)
        except RuntimeError:  # not ready in time: stop it, so that the next replace_dead tries again
            if replica.process is not None:
                stop_group(replica.process)
            raise
        self.balancer.set_state(replica.name, "ready")
        self.wait_balancer({replica.name: "UP"})

    def rolling_restart(self) -> None:
        for replica in self.members:
            print(f"rolling restart: {replica.name}", flush=True)
            self.restart(replica)

    def replace_dead(self) -> list[str]:
        """Restart every replica that exited, RESTART_SPACING seconds after it last started at the earliest (one that
        keeps dying), and while another replica is alive, ``restart_delay`` seconds after it was found dead (its
        students reopen their views there first)."""
        restarted = []
        for replica in self.members:
            now = time.monotonic()  # a restart before this one in the loop took a while
            if replica.alive:
                continue
            if replica.found_dead is None:
                replica.found_dead = now
                print(f"{replica.name} exited ({replica.process.returncode if replica.process else None})", flush=True)
            due = replica.started + RESTART_SPACING
            if any(other.alive for other in self.members if other is not replica):
                due = max(due, replica.found_dead + self.restart_delay)
            if now >= due:
                print(f"{replica.name}: restarting", flush=True)
                self.restart(replica)
                restarted.append(replica.name)
        return restarted

    def stop(self) -> None:
        for process in [self.haproxy, *(r.process for r in self.members)]:
            if process is not None:
                stop_group(process)
        if self.launcher is not None:
            self.launcher.stop()

    def write_state(self) -> None:
        """``state.json`` in the work folder: the public URL, HAProxy's and the launcher's process ids, each
        replica's name, port and process id.
        Written whole, then renamed: a reader never sees a half-written file."""
        launcher = self.launcher.process if self.launcher else None
        state = {"url": self.url, "haproxy_pid": self.haproxy.pid if self.haproxy else None,
                 "launcher_pid": launcher.pid if launcher else None, "postgres_pid": self.store_pid,
                 "replicas": [{"name": r.name, "port": r.port, "pid": r.process.pid if r.process else None,
                               "restarts": r.restarts, "log": str(r.log)} for r in self.members]}  # fmt: skip
        partial = self.workdir / "state.json.partial"
        partial.write_text(json.dumps(state, indent=2))
        partial.replace(self.workdir / "state.json")

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Signals:
    """SIGINT/SIGTERM ask to stop, SIGHUP asks for a rolling restart; the main loop acts on them."""

    def __init__(self) -> None:
        self.stop = False
        self.rolling = False
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGHUP, self._rolling)

    def _stop(self, *_: object) -> None:
        if self.stop:  # a second Ctrl+C while stopping: leave at once (children still get PDEATHSIG)
            raise KeyboardInterrupt
        self.stop = True

    def _rolling(self, *_: object) -> None:
        self.rolling = True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=2, help="Streamlit processes (default 2)")
    parser.add_argument("--port", type=int, default=8501, help="the one public port (default 8501)")
    parser.add_argument("--address", default="0.0.0.0", help="where HAProxy listens (default: every interface)")
    parser.add_argument("--model", help="sets BERTLENS_MODEL for every replica")
    parser.add_argument(
        "--workdir", type=Path, help="logs, rendered config, admin socket, state.json (default: a temp folder)"
    )
    parser.add_argument(
        "--separate-processes",
        action="store_true",
        help="start each replica as its own process instead of forking them from one that preloaded the libraries",
    )
    parser.add_argument(
        "--restart-delay",
        type=float,
        default=RESTART_DELAY,
        help=f"seconds between a replica's death and its restart while another serves (default {RESTART_DELAY:g})",
    )
    parser.add_argument("--render", action="store_true", help="print the rendered HAProxy config and exit")
    parser.add_argument("--bind", default=":8501", help="with --render: the public address")
    parser.add_argument("--server", action="append", default=[], help="with --render: a replica's host:port (repeat)")
    parser.add_argument(
        "--admin-socket", default="/tmp/haproxy.sock", help="with --render: HAProxy's runtime API socket"
    )
    args = parser.parse_args(argv)

    if args.render:
        if not args.server:
            parser.error("--render needs at least one --server host:port")
        sys.stdout.write(render_config(args.bind, args.server, args.admin_socket))
        return 0
    if args.replicas < 1:
        parser.error("--replicas must be at least 1")

    env = dict(os.environ)
    if args.model:
        env["BERTLENS_MODEL"] = args.model
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bertlens-serve-"))
    signals = Signals()  # before starting anything: a SIGTERM during start-up still stops every child
    print(f"starting {args.replicas} replica(s) and HAProxy; logs in {workdir}", flush=True)
    try:
        with class_store(env) as store:
            where = "PostgreSQL started for them" if store.pid else f"{CLASS_STORE_ENV_VAR}'s store"
            print(f"live classes: {where}", flush=True)
            serve(args, workdir, store, signals)
    except NoClassStore as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 1
    print("stopped", flush=True)
    return 0


def serve(args: argparse.Namespace, workdir: Path, store: ClassStore, signals: Signals) -> None:
    """The cluster, until a stop is asked for."""
    cluster = Cluster(args.replicas, args.port, workdir, args.address, store.env, stopping=lambda: signals.stop,
                      preload=PRELOAD_DEFAULT and not args.separate_processes, restart_delay=args.restart_delay,
                      store_pid=store.pid)  # fmt: skip
    try:
        with cluster:
            print(f"BERT Lens is up: {cluster.url}  ({args.replicas} replicas; Ctrl+C stops, SIGHUP restarts them one by one)",
                  flush=True)  # fmt: skip
            while not signals.stop:
                try:
                    if signals.rolling:
                        signals.rolling = False
                        cluster.rolling_restart()
                    cluster.replace_dead()
                except RuntimeError as error:  # a replica that would not come back: the others keep serving
                    print(f"error: {error}", file=sys.stderr, flush=True)
                time.sleep(0.5)
    except (Stopped, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    sys.exit(main())
