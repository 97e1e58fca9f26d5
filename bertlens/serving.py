"""Serving hygiene for a long-running server shared by a class."""

from __future__ import annotations

import gc
import importlib
import logging
import os
import pkgutil
import socket
import threading
from pathlib import Path

GC_FREEZE_ENV = "BERTLENS_GC_FREEZE"  # "0" turns freezing off (e.g. to measure what it saves)
NODELAY_ENV = "BERTLENS_TCP_NODELAY"  # "0" leaves Nagle's algorithm on (e.g. to measure what turning it off saves)
# OpenMP's idle threads sleep instead of spinning; set before torch loads (OpenMP reads it once, then).
THREAD_ENVIRONMENT = {"OMP_WAIT_POLICY": "PASSIVE"}
_import_lock = threading.Lock()
_imported: set[str] = set()
_nagle_lock = threading.Lock()
_nagle_off = False
log = logging.getLogger(__name__)


def prepare_threads() -> None:
    """Let torch's idle OpenMP threads sleep between operations instead of spinning on a core.

    A class server runs Streamlit's Python work (figures, serialisation) on the same cores as each
    forward pass. Spinning OpenMP workers take the core that work needs, the work holds the
    interpreter lock longer, and the pass waits for it between operations. Measured (2 cores, a
    256-token bert-base analysis pass beside three busy threads): 1.22 s → 0.78 s; alone ~5 % slower
    (see docs/running-a-class.md, "Server options for a class"). Call it before anything imports torch; an operator's
    own ``OMP_WAIT_POLICY`` wins.
    """
    for name, value in THREAD_ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def freeze_long_lived_objects() -> int:
    """Move every object alive now (torch, transformers, a loaded model) out of the garbage collector's reach.

    Python's collector walks every object it tracks on each full collection (and Streamlit's
    ``runner.postScriptGC``, off in the shipped config, after every run); without this it walks the hundreds of
    thousands of objects of torch, transformers and each loaded model. Called after each model load and after its warm start (every view module imported,
    the presets cached): what is alive then lives as long as the server. That includes the objects of other
    sessions' runs in flight at that moment: those in a reference cycle (a plotly figure) are never freed. So it is
    called once per model put in memory, not per click, nor after a failed load or its retries (a fallback holds
    the bundled encoder, already frozen): a bounded number of times per process, each keeping at most what the
    running sessions held then. Garbage is collected first, so nothing unreachable is kept. Returns how many
    objects are frozen.
    """
    if os.environ.get(GC_FREEZE_ENV, "").strip() == "0":
        return gc.get_freeze_count()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def import_package(folder: Path, package: str) -> None:
    """Import every module of ``package`` (the modules in ``folder``) once per process, one thread at a time.

    Python's imports are not safe for two threads importing the same not-yet-imported modules at once: the
    first students on a fresh server got ``ImportError: cannot import name 'cache' from 'components'`` (a
    package seen half initialised) and sklearn's ``_DeadlockError`` (two circular imports in opposite order),
    in 2 of 3 cold starts here. Every script run calls this before importing the pages' modules; the first
    imports them under the lock while the others wait, later runs return at once.
    """
    if package in _imported:
        return
    with _import_lock:
        if package not in _imported:
            for module in pkgutil.walk_packages([str(folder)], prefix=f"{package}."):  # its layers' packages too
                importlib.import_module(module.name)
            _imported.add(package)


def imported(package: str) -> bool:
    """Whether ``import_package`` has imported ``package`` in this process."""
    return package in _imported


def send_small_messages_at_once() -> int:
    """Turn Nagle's algorithm off (``TCP_NODELAY``) for the server's connections; once per process.

    Streamlit 1.67's server binds its own listening socket with protocol 0, which asyncio does not take for
    TCP, so every connection kept Nagle's algorithm on: each run's last small messages waited for the
    browser's delayed acknowledgement, ~40 ms on every run (a cached rerun of a bare page: 44 → 6 ms).
    Sets the option on this process's listening TCP sockets first, which the connections they accept from then
    on inherit (Linux), then on the connections they had already accepted. Returns how many sockets it set;
    0 where ``/proc`` cannot say which they are. Any script thread may call it; one does the work.
    """
    global _nagle_off
    if _nagle_off:  # every run after the first: no lock
        return 0
    with _nagle_lock:
        if _nagle_off:
            return 0
        _nagle_off = True
        if os.environ.get(NODELAY_ENV, "").strip() == "0":
            return 0
        listeners = _own_tcp_sockets(listening=True)
        done = sum(_no_delay(fd, inode) for fd, inode in listeners)  # first: what they accept from now on inherits it
        ports = set(listeners.values())
        done += sum(
            _no_delay(fd, inode) for (fd, inode), port in _own_tcp_sockets(listening=False).items() if port in ports
        )
    log.info("TCP_NODELAY on %d serving sockets", done)
    return done


def _own_tcp_sockets(listening: bool) -> dict[tuple[int, str], int]:
    """This process's TCP sockets, listening or not: (file descriptor, socket inode) → local port.

    ``/proc/net/tcp`` lists the whole host's sockets ("sl local_address rem_address st … inode", the address as hex
    IP:PORT, state 0A = LISTEN); ``/proc/self/fd`` says which of them are this process's.
    """
    ports = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if (fields[3] == "0A") == listening:
                ports[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
    found = {}
    for name in os.listdir("/proc/self/fd") if Path("/proc/self/fd").is_dir() else ():
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:[") and (inode := target[8:-1]) in ports:
            found[(int(name), inode)] = ports[inode]
    return found


def _no_delay(fd: int, inode: str) -> bool:
    """``TCP_NODELAY`` on the socket ``fd`` names, if it is still the socket ``inode`` (a connection may have closed
    and its number been reused since the scan); whether it was set."""
    try:
        copy = os.dup(fd)  # the same socket under a number of its own, closed below: ``fd`` stays open
    except OSError:
        return False
    try:
        if str(os.fstat(copy).st_ino) != inode:
            return False
        with socket.socket(fileno=os.dup(copy)) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return True
    except OSError:
        return False
    finally:
        os.close(copy)
