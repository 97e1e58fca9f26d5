"""Past one server, measured on this host: the class simulation through HAProxy with 1, 2, 3 replicas.

    python -m scripts.scale_benchmark                          # 60 sessions, bert-base-sized random model
    python -m scripts.scale_benchmark --sessions 20 --inputs 2 --replicas 1 2 --json out.json

Phases (each starts its own replicas and HAProxy with scripts/serve.py's Cluster, deploy/haproxy.cfg):

1. Memory: 1, 2, 3 replicas, each with its model loaded (readiness) and one 128-token analysis done on it
   (the weights paged in): PSS (``/proc/PID/smaps_rollup``: shared pages divided among the processes that
   map them) and RSS of each replica, and the total PSS against one replica alone. Measured twice: replicas
   as their own processes, and forked from serve.py's preloaded launcher (scripts/preloaded.py; its own
   share of the pages counted in the total).
2. A first visit (empty browser cache, a throttled classroom network): the Attention page straight from a
   replica and through HAProxy, which compresses what Streamlit sends uncompressed. Bytes and settle time.
3. The class (scripts/class_load.py's sessions, inputs and checks) through the balancer with 1, 2, 3
   replicas: sessions served per replica (the X-BertLens-Replica header of each session's websocket),
   p50/p95 per page, errors, wrong results (every run checked against a transformers reference), model
   loads, total PSS after the burst, serving efficiency (Σ bare forward passes ÷ burst wall time).
4. A replica killed mid-burst (SIGKILL, the one holding most sessions, once a quarter of the runs are
   done); the dead replica is replaced as serve.py does. Each student whose connection drops does what
   the app does in a browser (components/ui/reconnect.py): opens its URL again through the balancer. Reports
   sessions affected, restored (the reopened view checked like every run), and the time to restore.

Bounded: ``--max-seconds`` per class phase. Aimed at 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode

# Before transformers and the Hub client load (they read these once): the model is a local folder or cached.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import torch  # noqa: E402
from websockets.exceptions import InvalidHandshake  # noqa: E402
from websockets.protocol import State  # noqa: E402

from bertlens.models import load_model  # noqa: E402
from bertlens.synthetic import random_bert_config, save_random_bert  # noqa: E402
from components.ui.reconnect import REOPENED_COOKIE  # noqa: E402
from scripts.class_checks import check_all  # noqa: E402
from scripts.class_load import DEFAULT_CAP, Options, hosted_env  # noqa: E402
from scripts.class_reference import Reference  # noqa: E402
from scripts.class_report import GIB, Summary, markdown, percentile, seconds_text, summarise  # noqa: E402
from scripts.class_sim import (  # noqa: E402
    PAD_QUERY,
    PADDING_LAB,
    PAGE_QUERY,
    Observation,
    Recorder,
    Step,
    classroom,
    plans,
    take_step,
    type_padding_batch,
)
from scripts.serve import Cluster  # noqa: E402
from scripts.server import free_port, model_loads  # noqa: E402
from scripts.streamlit_client import Run, Session, run_to_end  # noqa: E402
from scripts.visits import CHROMIUM, CHROMIUM_ARGS, LAST_CHANGE, wait_settled  # noqa: E402

REPLICA_HEADER = "X-BertLens-Replica"
RESTORE_ATTEMPTS = 3  # connections a student opens after losing one
RESTORE_TARGET_SECONDS = 15  # issue 15: every student of a killed replica back on their view within this


# --- memory --------------------------------------------------------------------------------------


def pss_rss_bytes(pid: int) -> tuple[int, int]:
    """(PSS, RSS) of a process from ``/proc/PID/smaps_rollup`` (Linux), in bytes."""
    values = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Pss", "Rss"):
            values[name] = int(rest.split()[0]) * 1024
    return values["Pss"], values["Rss"]


@dataclass
class Memory:
    replicas: int
    preloaded: bool  # forked from scripts/preloaded.py's launcher (else: each its own process)
    pss_gib: list[float]
    rss_gib: list[float]
    haproxy_pss_gib: float
    launcher_pss_gib: float  # the launcher holds its share of the pages it shares with the replicas

    @property
    def total_pss_gib(self) -> float:
        return sum(self.pss_gib) + self.haproxy_pss_gib + self.launcher_pss_gib


def cluster_memory(cluster: Cluster) -> Memory:
    """Every live replica's memory (a killed one not yet replaced, as after a short kill phase, has none)."""
    per_replica = [pss_rss_bytes(r.process.pid) for r in cluster.members if r.process and r.alive]
    launcher = cluster.launcher.process if cluster.launcher else None
    assert cluster.haproxy is not None, "a started cluster"
    return Memory(len(per_replica), launcher is not None, [p / GIB for p, _ in per_replica],
                  [r / GIB for _, r in per_replica], pss_rss_bytes(cluster.haproxy.pid)[0] / GIB,
                  pss_rss_bytes(launcher.pid)[0] / GIB if launcher else 0.0)  # fmt: skip


async def one_analysis(url: str, query: str, page: str = "attention") -> None:
    """One run of ``page`` with ``query`` straight on a replica (pages the weights in, like a first student)."""
    async with Session.connect(url, page, query) as session:
        await session.run(timeout=300)


def measure_memory(counts: list[int], workdir: Path, env: dict[str, str]) -> list[Memory]:
    text = " ".join(["the students read a short story about a quiet village near the river"] * 9)  # ~128 tokens
    results = []
    for preload in (False, True):
        for count in counts:
            folder = workdir / f"memory-{count}-{'preloaded' if preload else 'separate'}"
            with Cluster(count, free_port(), folder, "127.0.0.1", env, preload=preload) as cluster:
                for replica in cluster.members:
                    run_to_end(one_analysis(replica.url, urlencode({"text": text})))
                results.append(cluster_memory(cluster))
            print(f"memory, {count} replica(s), {'preloaded' if preload else 'separate processes'}: "
                  f"total PSS {results[-1].total_pss_gib:.2f} GiB", flush=True)  # fmt: skip
    return results


# --- a first visit over a classroom network ------------------------------------------------------

CLASSROOM_MBIT = 4.0  # one student's share of a school's 120 Mbit/s link, 30 students opening the link at once
CLASSROOM_LATENCY_MS = 20
FIRST_VISIT_QUERY = "text=The+teacher+shared+this+sentence+with+the+whole+class."  # the class link: a sentence in it


@dataclass
class FirstVisit:
    route: str  # "straight to a replica" or "through HAProxy"
    page: str
    megabytes: float  # bytes over the wire (HTTP; compressed where compressed)
    settle_ms: float  # to the page's last change, on the throttled network, empty browser cache


def first_visits(workdir: Path, env: dict[str, str], pages: Sequence[str] = ("attention",)) -> list[FirstVisit]:
    """A student's very first visit (empty browser cache) on a throttled network: each page straight from a
    replica (Streamlit serves its frontend uncompressed) and through HAProxy (deploy/haproxy.cfg compresses)."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 — optional: only this phase needs it (--skip-first-visit)

    visits = []
    with Cluster(1, free_port(), workdir / "first-visit", "127.0.0.1", env) as cluster, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for page in pages:  # the server's caches warm for both routes alike: only the network differs
            run_to_end(one_analysis(cluster.members[0].url, FIRST_VISIT_QUERY, page))
        for route, base in (("straight to a replica", cluster.members[0].url), ("through HAProxy", cluster.url)):
            for page in pages:
                context = browser.new_context(viewport={"width": 1280, "height": 720})  # a fresh, empty cache
                context.add_init_script(LAST_CHANGE)
                tab = context.new_page()
                cdp = context.new_cdp_session(tab)
                cdp.send("Network.enable")
                cdp.send("Network.emulateNetworkConditions", {
                    "offline": False, "latency": CLASSROOM_LATENCY_MS,
                    "downloadThroughput": CLASSROOM_MBIT * 1e6 / 8, "uploadThroughput": CLASSROOM_MBIT * 1e6 / 8,
                })  # fmt: skip
                received: list[float] = []
                cdp.on("Network.loadingFinished", lambda event, into=received: into.append(event["encodedDataLength"]))
                tab.goto(f"{base}/{page}?{FIRST_VISIT_QUERY}")
                # On a slow network the page can sit still while plotly's code is still arriving: not settled yet.
                tab.wait_for_selector(".js-plotly-plot", timeout=120_000)
                settle = wait_settled(tab)
                visits.append(FirstVisit(route, page, sum(received) / 1e6, settle))
                print(f"first visit, {page}, {route}: {visits[-1].megabytes:.1f} MB, {settle / 1000:.1f} s", flush=True)
                context.close()
        browser.close()
    return visits


def first_visit_table(visits: list[FirstVisit]) -> str:
    lines = [f"| page | route | over the wire | settled (empty cache, {CLASSROOM_MBIT:g} Mbit/s, {CLASSROOM_LATENCY_MS} ms) |",
             "| --- | --- | --- | --- |"]  # fmt: skip
    lines += [f"| {v.page} | {v.route} | {v.megabytes:.1f} MB | {v.settle_ms / 1000:.1f} s |" for v in visits]
    return "\n".join(lines)


# --- the class through the balancer --------------------------------------------------------------


@dataclass
class Outage:
    """One student whose connection dropped: when, and when the reopened view finished drawing."""

    session: int
    lost_at: float
    replica_before: str | None
    restored_at: float | None = None
    replica_after: str | None = None


@dataclass
class Classroom:
    recorder: Recorder
    outages: list[Outage] = field(default_factory=list)
    killed: tuple[str, float] | None = None  # (replica, when)


def replica_of(session: Session) -> str | None:
    response = session.websocket.response  # the handshake's: there once connected
    assert response is not None, "a connected session"
    return response.headers.get(REPLICA_HEADER)


Act = Callable[[Session, Run], Awaitable[Run | None] | None]  # the next action after a run (None: nothing left)


async def reopening(
    url: str, number: int, room: Classroom, page: str, query: str, act: Act, label: str | None = None,
    shown_typed: Callable[[str], str | None] = lambda query: None,
) -> None:  # fmt: skip
    """Open ``page`` and, after each run, do what ``act`` says until it has nothing left; when the connection
    drops, do what the app does in a browser: open the URL the tab showed (page and query string) again through
    the balancer, with the cookie that puts the reopened view ahead of the queue (components/ui/reconnect.py).
    Runs are recorded under ``label`` (default: the page); ``shown_typed(query)`` is what a reopened view shows
    as typed, for its check."""
    recorder, kind, typed = room.recorder, "open", None
    outage: Outage | None = None
    for _ in range(1 + RESTORE_ATTEMPTS):
        try:
            cookie = f"{REOPENED_COOKIE}=1" if outage is not None else ""  # the watcher's reload asks for priority
            async with Session.connect(url, page, query, cookie) as session:
                recorder.connected(number, session)
                first = session.run(timeout=recorder.timeout)
                run = await recorder.run(number, label or session.page, kind, first, typed=typed)
                if run is not None and outage is not None:
                    outage.restored_at, outage.replica_after = time.perf_counter(), replica_of(session)
                while run is not None and (step := act(session, run)) is not None:
                    run = await step
                if run is not None:
                    return  # nothing left to do
                if session.websocket.state is not State.CLOSED:
                    return  # a failed run or a timeout, not a lost connection: the session ends (as in class_load)
                page, query, kind = session.page, session.query_string, "restored"  # the URL the browser shows
                typed = shown_typed(query)
                if outage is None or outage.restored_at is not None:
                    outage = Outage(number, time.perf_counter(), replica_of(session))
                    room.outages.append(outage)
        except (OSError, InvalidHandshake) as error:  # the balancer refused the reconnect: try again shortly
            recorder.observations.append(Observation(number, page, kind, 0.0, None, f"connect: {error}"[:300]))
            await asyncio.sleep(1.0)


async def restoring_student(url: str, number: int, steps: list[Step], room: Classroom) -> None:
    """class_load's student (open a page; per step: move to its page, type its text), reopening its view."""
    remaining = list(steps)

    async def take_next(session: Session, run: Run) -> Run | None:
        taken = await take_step(room.recorder, number, session, run, remaining[0])
        if taken is not None:
            remaining.pop(0)
        return taken

    def act(session: Session, run: Run) -> Awaitable[Run | None] | None:
        return take_next(session, run) if remaining else None

    await reopening(url, number, room, steps[0].page, PAGE_QUERY.get(steps[0].page, ""), act)


async def restoring_padding_student(
    url: str, number: int, room: Classroom, others_done: asyncio.Event, limit: int, pause: float
) -> None:
    """class_load's Padding-lab student (new lines until the others are done), reopening its view."""
    rounds = iter(range(limit))

    def act(session: Session, run: Run) -> Awaitable[Run | None] | None:
        round_number = None if others_done.is_set() else next(rounds, None)
        return (
            None
            if round_number is None
            else type_padding_batch(room.recorder, number, session, run, round_number, pause)
        )

    def shown_lines(query: str) -> str | None:  # the reopened URL's batch (None: the lab's default, unchecked)
        return parse_qs(query).get("lines", [None])[0]

    await reopening(url, number, room, "tokenizer", PAD_QUERY, act, PADDING_LAB, shown_lines)


@dataclass(frozen=True)
class Kill:
    """Which replica to SIGKILL mid-burst, and when."""

    after_runs: int  # once this many runs are recorded
    of_session: int | None = None  # the replica serving this session; None: the one holding most sessions


def kill_when(cluster: Cluster, room: Classroom, kill: Kill, stop: threading.Event) -> None:
    """SIGKILL the replica ``kill`` names once its runs are recorded (most sessions: HAProxy's current count)."""
    while len(room.recorder.observations) < kill.after_runs:
        if stop.wait(0.05):
            return
    current = cluster.balancer.sessions()
    if kill.of_session is None:
        victim = max(cluster.members, key=lambda r: current.get(r.name, 0))
    else:
        serving = replica_of(room.recorder.connections[kill.of_session][-1])
        victim = next(r for r in cluster.members if r.name == serving)
    assert victim.process is not None, "a started replica"
    room.killed = (victim.name, time.perf_counter())
    os.kill(victim.process.pid, signal.SIGKILL)


def class_burst(
    cluster: Cluster,
    steps: list[list[Step]],
    room: Classroom,
    seconds: float,
    padding_limit: int,
    kill: Kill | None,
) -> tuple[float, bool]:
    """The class in a worker thread; this thread replaces a dead replica as serve.py does. (wall, in time)."""

    async def everyone() -> float:
        async def one(url: str, number: int, steps: list[Step], recorder: Recorder) -> None:
            await restoring_student(url, number, steps, room)

        async def lab(url: str, number: int, recorder: Recorder, done: asyncio.Event, limit: int, pause: float) -> None:
            await restoring_padding_student(url, number, room, done, limit, pause)

        class_ = classroom(cluster.url, steps, room.recorder, padding_limit, one=one, lab=lab)
        return await asyncio.wait_for(class_, seconds)

    stop = threading.Event()
    killer = None
    if kill is not None:
        killer = threading.Thread(target=kill_when, args=(cluster, room, kill, stop), daemon=True)
        killer.start()
    started = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(asyncio.run, everyone())
        while not future.done():
            if room.killed:
                cluster.replace_dead()
            time.sleep(0.2)
        stop.set()
        try:
            return future.result(), True
        except TimeoutError:
            return time.perf_counter() - started, False


@dataclass
class ClassResult:
    replicas: int
    summary: Summary
    sessions_per_replica: dict[str, int]
    total_pss_gib: float
    killed: str | None = None
    affected: int = 0
    restored: int = 0
    restore_seconds: list[float] = field(default_factory=list)  # kill -> the reopened view drawn, per session
    restored_sessions: list[int] = field(default_factory=list)  # their numbers (the Padding lab's: sessions)
    other_errors: int = 0  # failed runs of the sessions that did not start on the killed replica (nor connect at all)


def run_class(
    model: str,
    replicas: int,
    options: Options,
    workdir: Path,
    env: dict[str, str],
    ref: Reference,
    kill: Kill | None = None,
) -> ClassResult:
    """The class through HAProxy in front of ``replicas`` replicas; optionally one replica killed mid-burst."""
    deadline = time.monotonic() + options.max_seconds
    steps = plans(ref.tokenizer, options.sessions, options.inputs, options.seed)
    room = Classroom(Recorder(options.run_timeout))
    with Cluster(replicas, free_port(), workdir, "127.0.0.1", {**env, **hosted_env(model, options)}) as cluster:
        wall, in_time = class_burst(cluster, steps, room, max(10.0, (deadline - time.monotonic()) * 0.75),
                                    options.padding_limit, kill)  # fmt: skip
        total_pss = cluster_memory(cluster).total_pss_gib
        loads = sum(len(model_loads(r.log)) for r in cluster.members)
    verdicts, inputs = check_all(room.recorder.observations, ref, deadline)
    bare = ref.bare_pass_times(load_model(model), inputs)
    cores = os.cpu_count() or 1
    summary = summarise(
        verdicts, sessions=options.sessions, inputs_per_session=options.inputs, model=model, hosted=options.hosted,
        token_cap=ref.cap if options.hosted else None, finished_in_time=in_time, burst_seconds=wall,
        model_loads=loads, peak_rss_gib=None, distinct_model_inputs=len(inputs), **bare.facts(wall, cores), cores=cores,
        torch_threads=torch.get_num_threads(),
    )  # fmt: skip
    first_replica = {n: replica_of(tabs[0]) or "?" for n, tabs in room.recorder.connections.items()}
    per_replica = Counter(first_replica[n] for n in range(len(steps)) if n in first_replica)  # the Padding lab not
    result = ClassResult(replicas, summary, dict(sorted(per_replica.items())), total_pss)
    if room.killed:
        victim, killed_at = room.killed
        result.killed = victim
        result.affected = len(room.outages)
        result.restored = sum(o.restored_at is not None for o in room.outages)
        result.restored_sessions = sorted(o.session for o in room.outages if o.restored_at is not None)
        result.restore_seconds = sorted(o.restored_at - killed_at for o in room.outages if o.restored_at)
        result.other_errors = sum(
            o.error is not None for o in room.recorder.observations if first_replica.get(o.session) != victim
        )
    return result


# --- the report ----------------------------------------------------------------------------------


def memory_table(memory: list[Memory]) -> str:
    """Ratios against one replica started as its own process: what a single server costs."""
    alone = [m.total_pss_gib for m in memory if m.replicas == 1 and not m.preloaded]
    lines = ["| replicas | started | PSS per replica | RSS per replica | launcher PSS | HAProxy PSS | total PSS | "
             "× one replica alone |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for m in memory:
        ratio = f"{m.total_pss_gib / alone[0]:.2f} ×" if alone else "—"
        lines.append(f"| {m.replicas} | {'forked, preloaded' if m.preloaded else 'own processes'} | "
                     f"{', '.join(f'{p:.2f}' for p in m.pss_gib)} GiB | {', '.join(f'{r:.2f}' for r in m.rss_gib)} GiB | "
                     f"{m.launcher_pss_gib * 1024:.0f} MiB | {m.haproxy_pss_gib * 1024:.0f} MiB | "
                     f"{m.total_pss_gib:.2f} GiB | {ratio} |")  # fmt: skip
    return "\n".join(lines)


def class_table(results: list[ClassResult]) -> str:
    pages = list(dict.fromkeys(name for r in results for name in r.summary.pages))
    head = " | ".join(
        f"{r.replicas} replica{'s' if r.replicas > 1 else ''}{' + kill' if r.killed else ''}" for r in results
    )
    lines = [f"|  | {head} |", "| --- |" + " --- |" * len(results)]

    def row(label: str, values: Iterable[str]) -> None:
        lines.append(f"| {label} | " + " | ".join(values) + " |")

    row("sessions per replica", [", ".join(f"{k}: {v}" for k, v in r.sessions_per_replica.items()) for r in results])
    for page in pages:
        row(f"{page}: p50 / p95", [f"{seconds_text(r.summary.pages[page]['p50_seconds'])} / "
                                   f"{seconds_text(r.summary.pages[page]['p95_seconds'])}" if page in r.summary.pages else "—"
                                   for r in results])  # fmt: skip
    row(
        "burst wall time",
        [f"{r.summary.burst_seconds:.1f} s{'' if r.summary.finished_in_time else ' (limit)'}" for r in results],
    )
    row("script runs", [str(r.summary.runs) for r in results])
    row("errors (interrupted by the kill included)", [str(r.summary.errors) for r in results])
    row("wrong results", [str(r.summary.wrong) for r in results])
    row("model loads", [str(r.summary.model_loads) for r in results])
    row("total PSS after the burst", [f"{r.total_pss_gib:.2f} GiB" for r in results])
    row(
        "serving efficiency (Σ bare forwards, one core each ÷ wall)",
        [f"{r.summary.serving_efficiency:.0%}" for r in results],
    )
    row("the same, each bare pass on all cores", [f"{r.summary.serving_efficiency_all_cores:.0%}" for r in results])
    if any(r.killed for r in results):
        row(
            "killed replica: sessions affected / restored",
            [f"{r.killed}: {r.affected} / {r.restored}" if r.killed else "—" for r in results],
        )
        row("time to restore (kill → view drawn again): p50 / max",
            [f"{seconds_text(percentile(r.restore_seconds, 0.5))} / {seconds_text(max(r.restore_seconds))}"
             if r.restore_seconds else "—" for r in results])  # fmt: skip
        row(f"restored within {RESTORE_TARGET_SECONDS} s",
            [f"{sum(t <= RESTORE_TARGET_SECONDS for t in r.restore_seconds)} / {r.affected}" if r.killed else "—"
             for r in results])  # fmt: skip
        row(
            "errors in the sessions not on the killed replica",
            [str(r.other_errors) if r.killed else "—" for r in results],
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--inputs", type=int, default=2, help="distinct inputs each student types")
    parser.add_argument(
        "--replicas", type=int, nargs="*", default=[1, 2, 3], help="class phases (none: only the kill phase)"
    )
    parser.add_argument("--kill-replicas", type=int, default=2, help="replicas in the kill phase (0: no kill phase)")
    parser.add_argument("--model", help="model folder (default: a random model with bert-base-uncased's config)")
    parser.add_argument("--max-seconds", type=float, default=600, help="limit per class phase")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-class", action="store_true")
    parser.add_argument("--skip-first-visit", action="store_true", help="no browser: skip the first-visit phase")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    options = Options(sessions=args.sessions, inputs=args.inputs, max_seconds=args.max_seconds)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("BERTLENS_HOSTED", None)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            model = str(save_random_bert(Path(tmp) / "bert-base-uncased-random", random_bert_config()))
        env["BERTLENS_MODEL"] = model
        memory = [] if args.skip_memory else measure_memory(sorted(args.replicas), Path(tmp), env)
        visits = [] if args.skip_first_visit else first_visits(Path(tmp), env)
        results: list[ClassResult] = []
        if not args.skip_class:
            ref = Reference(model, options.token_cap or DEFAULT_CAP)
            for count in args.replicas:
                results.append(run_class(model, count, options, Path(tmp) / f"class-{count}", env, ref))
                print(f"class, {count} replica(s): done", flush=True)
            if args.kill_replicas:
                expected_runs = args.sessions * (1 + 2 * args.inputs)
                results.append(run_class(model, args.kill_replicas, options, Path(tmp) / "class-kill", env, ref,
                                         Kill(after_runs=expected_runs // 4)))  # fmt: skip
    print(
        f"\nMachine: {os.cpu_count()} cores; model {'random bert-base' if args.model is None else args.model}; "
        f"{args.sessions} sessions × {args.inputs} inputs; hosted caps (token cap {DEFAULT_CAP}).\n"
    )
    if memory:
        print(memory_table(memory) + "\n")
    if visits:
        print(first_visit_table(visits) + "\n")
    if results:
        print(class_table(results) + "\n")
        for r in results:
            if r.summary.examples:
                print(
                    f"{r.replicas} replica(s){' + kill' if r.killed else ''}, first problems:",
                    *r.summary.examples,
                    sep="\n- ",
                )
        print("\nPer phase, class_load's own table:\n")
        for r in results:
            print(
                f"### {r.replicas} replica(s){' + kill of ' + r.killed if r.killed else ''}\n\n{markdown(r.summary)}\n"
            )
    if args.json:
        args.json.write_text(json.dumps({"memory": [asdict(m) | {"total_pss_gib": m.total_pss_gib} for m in memory],
                                         "first_visits": [asdict(v) for v in visits], "classes": [asdict(r) for r in results]}, indent=2, default=str))  # fmt: skip


if __name__ == "__main__":
    main()
