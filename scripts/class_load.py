"""A class on one shared link: S browser sessions against a real BERT Lens server on 127.0.0.1.

    python -m scripts.class_load                      # 30 sessions, bert-base-sized random model, hosted caps
    python -m scripts.class_load --families bert,roberta   # the same class on each, one server after the other
    python -m scripts.class_load --sessions 8 --inputs 3 --json out.json
    python -m scripts.class_load --url http://127.0.0.1:8501 --model /path/to/its/model --pid 1234

Each session is a browser tab speaking Streamlit's protocol (``scripts/streamlit_client.py``). It
opens a page and, for each of its inputs (distinct texts of 20–512 tokens), moves to the next page
(tokenizer, anatomy, fill_mask, next_sentence, attention, senses in turn) and types the input there.
One more session stays in the Tokenizer page's Padding lab throughout (max_length 8, truncation on),
typing new lines while the others work: padding a batch sets state on the shared tokenizer.

Every run is checked afterwards against a reference computed here, in this process, directly with
transformers (own tokenizer and model instances, loaded from the same folder; truncation to the cap):
the token ids (tokenizer table, padding-lab heatmap), the tokens (anatomy's embedding table, the NSP
segments table), the attention heatmap of the layer/head shown, fill-mask probabilities, P(IsNext),
the word-senses cosines, and the truncation notice for inputs over the cap. Leaked truncation shows
as a short token list, a small heatmap or changed values.

Prints Markdown: p50/p95 latency per page, errors (exception elements, failed runs, timeouts), wrong
results, model loads (the server log's "bertlens INFO Loading model" lines), peak server RSS (VmHWM),
and serving efficiency = Σ bare forward pass (``bundle.model.bert(input_ids)``, timed here on the
same model, once per distinct model input the pages need, torch on one thread) ÷ wall time of the
burst; ideal p95 = Σ bare forwards ÷ cores (each pass on a core of its own); and the stricter
efficiency with each bare pass on all cores (torch's default threads), which no server can beat.
The class arrives once the server has loaded its model and warmed every page's presets, as when a
teacher starts it before the lesson (``--cold``: during that). Bounded: ``--max-seconds`` (default
600) stops the whole run.

``--families bert,roberta`` runs the class once per family, each on a random model of that family's base-size
config (``bertlens.synthetic.BASE_CONFIGS``: roberta-base's hidden 768, 12 layers and heads, vocabulary 50,265, 514
positions, one token type), one fresh server after the other, and ends with a table of the families side by side.
Only BERT's tokenizer is the real one: RoBERTa's is a small byte-level BPE trained offline
(``bertlens.synthetic.family_tokenizer``; the real one cannot be downloaded here; its vocabulary padded to 50,265
with unused entries no text splits into), so the texts are made of its one-token words and a text's token count
differs from what roberta-base's own tokenizer would give; the model's shape and the MLM head over the full
vocabulary are roberta-base's, so its speed and memory are honest. The checks follow the family: fill-mask at
``<mask>``; RoBERTa has no NSP head, and its embeddings are not BERT's three-table sum (one token type), so the Next
sentence page and anatomy's Embeddings tab must give their reason and show no number.

The parts: the simulated class (``scripts/class_sim.py``), the reference (``scripts/class_reference.py``), the checks
(``scripts/class_checks.py``) and the report (``scripts/class_report.py``); this module runs them against a
server and is the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Before transformers and the Hub client load (they read these once): the model is a local folder or cached.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import torch  # noqa: E402

from bertlens.models import load_model  # noqa: E402
from bertlens.synthetic import BASE_CONFIGS, save_random_base_model  # noqa: E402
from scripts.class_checks import check_all  # noqa: E402
from scripts.class_reference import Reference  # noqa: E402
from scripts.class_report import GIB, Summary, families_table, markdown, summarise  # noqa: E402
from scripts.class_sim import Recorder, burst, plans  # noqa: E402
from scripts.server import cpu_seconds, model_loads, peak_rss_bytes, running_server, thread_cpu_seconds  # noqa: E402
from scripts.streamlit_client import Session, run_to_end  # noqa: E402

DEFAULT_CAP = 256  # hosted mode's default BERTLENS_MAX_TOKENS


@dataclass
class Options:
    sessions: int = 30
    inputs: int = 4
    seed: int = 0
    run_timeout: float = 180.0  # seconds without a message before a run counts as timed out
    max_seconds: float = 600.0
    padding_limit: int = 400  # Padding lab runs at most (0: nobody in the Padding lab)
    padding_pause: float = 0.0  # seconds between Padding-lab batches (0: as fast as the server answers)
    cold: bool = False  # True: the class arrives at a fresh server (no waiting for its warm start)
    server_env: dict[str, str] = field(default_factory=dict)  # more environment for the server (e.g. OMP_NUM_THREADS)
    hosted: bool = True
    token_cap: int | None = None  # hosted only; None = hosted mode's default (256)


def hosted_env(model: str, options: Options) -> dict[str, str]:
    if not options.hosted:
        return {}
    env = {"BERTLENS_HOSTED": "1", "BERTLENS_ALLOWED_MODELS": model}
    if options.token_cap:
        env["BERTLENS_MAX_TOKENS"] = str(options.token_cap)
    return env


def measure(url: str, model: str, options: Options, log: Path | None, pid: int | None, deadline: float) -> Summary:
    """Run the class against ``url`` (serving ``model``), then check and time everything here."""
    cap = (options.token_cap or DEFAULT_CAP) if options.hosted else None
    ref = Reference(model, cap)
    steps = plans(ref.tokenizer, options.sessions, options.inputs, options.seed)
    recorder = Recorder(options.run_timeout)
    # The burst gets what is left of the time, minus a share for checking and timing afterwards.
    seconds = max(10.0, (deadline - time.monotonic()) * 0.75)
    cpu_before, threads_before = (cpu_seconds(pid), thread_cpu_seconds(pid)) if pid else (0.0, {})
    wall, in_time = burst(url, steps, recorder, seconds, options.padding_limit, options.padding_pause)
    server_cpu = cpu_seconds(pid) - cpu_before if pid else None
    by_thread = cpu_shares(pid, threads_before, server_cpu) if pid and server_cpu else {}  # read right after it
    rss = peak_rss_bytes(pid) if pid else None
    verdicts, inputs = check_all(recorder.observations, ref, deadline)
    # Through the app's own loading path: the floor is its model's bare forward.
    bare = ref.bare_pass_times(load_model(model), inputs)
    cores = os.cpu_count() or 1
    return summarise(
        verdicts,
        sessions=options.sessions,
        inputs_per_session=options.inputs,
        padding_pause=options.padding_pause,
        model=model,
        hosted=options.hosted,
        token_cap=cap,
        finished_in_time=in_time,
        burst_seconds=wall,
        model_loads=len(model_loads(log)) if log else None,
        peak_rss_gib=rss / GIB if rss else None,
        distinct_model_inputs=len(inputs),
        **bare.facts(wall, cores),
        cores=cores,
        torch_threads=torch.get_num_threads(),
        server_cpu_seconds=server_cpu,
        server_cpu_by_thread=by_thread,
    )


# The server's CPU time over the burst, by kind of thread. Threads carry no names Linux shows, so they are told
# apart by their lives: the main thread runs the event loop (websockets); the threads alive before and after the
# burst are the engine's forward-pass workers and torch's thread pool (and a few idle helpers of Streamlit);
# threads that came and went (or came) during the burst are Streamlit's script runs, one thread per run. Approximate:
# on a cold server torch's pool starts during the burst and counts as script runs; a warm class (the default) has it.
CPU_SHARES = (
    "event loop (main thread)",
    "forward passes (threads alive through the burst)",
    "script runs (threads started in it)",
)


def cpu_shares(pid: int, before: dict[int, float], total: float) -> dict[str, float]:
    after = thread_cpu_seconds(pid)
    loop = after.get(pid, 0.0) - before.get(pid, 0.0)
    lasting = sum(after[t] - before[t] for t in after.keys() & before.keys() if t != pid)
    return dict(zip(CPU_SHARES, (loop, lasting, total - loop - lasting)))


def warm_up(url: str, log: Path, seconds: float) -> float:
    """Open the app once (the model loads, the warm start begins) and wait until the warm start has
    finished, as a teacher starts the server before the class; returns how long that took."""
    started = time.monotonic()

    async def first_visit() -> None:
        async with Session.connect(url, "") as session:
            await session.run(timeout=seconds)

    run_to_end(first_visit())
    while "Warm start of" not in log.read_text():
        if time.monotonic() - started > seconds:
            raise TimeoutError(f"the server's warm start did not finish in {seconds:.0f} s")
        time.sleep(0.5)
    return time.monotonic() - started


def run_class(model: str, options: Options, log: Path) -> Summary:
    """Start a server on ``model`` (hosted caps unless ``options.hosted`` is off), run the class, stop it."""
    deadline = time.monotonic() + options.max_seconds
    with running_server(model, log, **hosted_env(model, options), **options.server_env) as server:
        warmed = None if options.cold else warm_up(server.url, log, (deadline - time.monotonic()) / 3)
        summary = measure(server.url, model, options, server.log, server.pid, deadline)
    summary.model_loads = len(model_loads(log))
    summary.warm_start_seconds = warmed
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=30, help="students (plus one in the Padding lab)")
    parser.add_argument("--inputs", type=int, default=4, help="distinct inputs each student types")
    parser.add_argument("--model", help="model folder or id (default: a random model with bert-base-uncased's config)")
    parser.add_argument(
        "--families",
        type=lambda value: value.split(","),
        help=f"instead of --model: random base-size models of these families, one class each "
        f"(comma-separated, of {', '.join(BASE_CONFIGS)}; default bert)",
    )
    parser.add_argument("--url", help="an already running server (then --model must name its model)")
    parser.add_argument("--pid", type=int, help="with --url: the server's process id, for its peak RSS")
    parser.add_argument("--no-hosted", action="store_true", help="start the server without hosted mode's caps")
    parser.add_argument("--max-tokens", type=int, help="hosted token cap (default 256)")
    parser.add_argument("--max-seconds", type=float, default=600, help="hard limit for the whole run")
    parser.add_argument("--run-timeout", type=float, default=180, help="seconds without a reply before a run times out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cold", action="store_true", help="the class arrives at a fresh server, during its model load and warm start"
    )
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the server only (repeatable), e.g. OMP_NUM_THREADS=1",
    )
    parser.add_argument("--no-padding-lab", action="store_true", help="nobody in the Padding lab (a control run)")
    parser.add_argument(
        "--padding-pause",
        type=float,
        default=0.0,
        help="seconds between the Padding-lab student's batches (default 0: a new batch as soon as one is shown)",
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()
    if args.url and not args.model:
        parser.error("--url needs --model (the reference must use the server's model)")
    if args.families and (args.model or set(args.families) - BASE_CONFIGS.keys()):
        parser.error(f"--families takes some of {', '.join(BASE_CONFIGS)}, and no --model")
    families = args.families or ["bert"]

    def out_of_time(*_: object) -> None:
        raise TimeoutError(f"stopped after --max-seconds {args.max_seconds:.0f} s")

    signal.signal(signal.SIGALRM, out_of_time)
    options = Options(
        sessions=args.sessions,
        inputs=args.inputs,
        seed=args.seed,
        run_timeout=args.run_timeout,
        max_seconds=args.max_seconds,
        hosted=not args.no_hosted,
        token_cap=args.max_tokens,
        padding_limit=0 if args.no_padding_lab else Options.padding_limit,
        padding_pause=args.padding_pause,
        cold=args.cold,
        server_env=dict(item.split("=", 1) for item in args.server_env),
    )
    summaries: dict[str, Summary] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in [args.model] if args.model else families:
            # Last resort (the phases watch the deadline themselves): each class, its model's saving
            # included, has --max-seconds and a minute, re-armed per class so a slow one cannot cut the next.
            signal.alarm(int(args.max_seconds) + 60)
            model = args.model or str(save_random_base_model(Path(tmp) / f"{name}-base-random", name))
            summaries[name] = run_on(model, args, options, Path(tmp) / "runs" / name.replace("/", "_"))
            if not args.model:
                shutil.rmtree(model)  # half a gigabyte each
            table = markdown(summaries[name])
            print(f"### {name}\n\n{table}\n" if len(summaries) > 1 or len(families) > 1 else table, flush=True)
        signal.alarm(0)
    if len(summaries) > 1:
        print(families_table(summaries))
    if args.json:
        found = [asdict(s) for s in summaries.values()]
        args.json.write_text(
            json.dumps(found[0] if len(found) == 1 else dict(zip(summaries, found)), indent=2, default=str)
        )


def run_on(model: str, args: argparse.Namespace, options: Options, scratch: Path) -> Summary:
    """The class against ``args.url`` (serving ``model``), or against a server of its own started on ``model``."""
    if args.url:
        return measure(args.url, model, options, None, args.pid, time.monotonic() + args.max_seconds)
    scratch.mkdir(parents=True, exist_ok=True)
    return run_class(model, options, scratch / "server.log")


if __name__ == "__main__":
    main()
