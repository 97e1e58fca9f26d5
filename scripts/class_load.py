"""A class on one shared link: S browser sessions against a real BERT Lens server on 127.0.0.1.

    python scripts/class_load.py                      # 30 sessions, bert-base-sized random model, hosted caps
    python scripts/class_load.py --sessions 8 --inputs 3 --json out.json
    python scripts/class_load.py --url http://127.0.0.1:8501 --model /path/to/its/model --pid 1234

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
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import signal
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bertlens.budgets import default_budgets  # noqa: E402
from bertlens.pages import TOOL_PAGES  # noqa: E402
from scripts.server import cpu_seconds, model_loads, peak_rss_bytes, running_server, thread_cpu_seconds  # noqa: E402
from scripts.streamlit_client import Run, Session, plotly_array, plotly_figure, run_to_end  # noqa: E402

PAGES = TOOL_PAGES  # every page that shows the model, in the registry's order
LENGTHS = (20, 48, 128, 300, 512)  # tokens per input, [CLS]/[SEP] included (before the cap)
WORDS = ("the students read a short story about a quiet village near the river and then wrote "
         "notes on how every word changes its meaning with context in class today").split()  # fmt: skip
SENSE_WORD = "field"  # the word-senses page's default preset follows "field": every input has it
PAD_LENGTH = 8
LAB_LINES = default_budgets(hosted=True).lab_lines  # as many lines as the Padding lab reads, hosted or not
PAD_QUERY = f"tokenizer_tab=Padding+lab&pad=max_length&pad_len={PAD_LENGTH}&trunc=true"
# The tab that shows what is checked, where it is not the page's first tab.
PAGE_QUERY = {"anatomy": "anatomy_tab=Embeddings", "senses": "senses_tab=Similarity"}
PADDING_LAB = "tokenizer (Padding lab)"
DEFAULT_CAP = 256  # hosted mode's default BERTLENS_MAX_TOKENS
TOLERANCE = 2e-4  # float32 results from the server vs this process (shown probabilities: 4 decimals)
GIB = 2**30


# --- the inputs ----------------------------------------------------------------------------------


def input_text(tokenizer, session: int, step: int, tokens: int, rng: random.Random) -> str:
    """A distinct text of ``tokens`` tokens (specials included) with a [MASK] and "field" among the first 12."""
    prefix = f"Lesson {session} part {step}: the [MASK] ran across the {SENSE_WORD} and"
    used = len(tokenizer(prefix)["input_ids"]) + 1  # the final "."
    filler = [rng.choice(WORDS) for _ in range(max(0, tokens - used))]  # each is one WordPiece token
    text = " ".join([prefix, *filler]) + "."
    assert len(tokenizer(text)["input_ids"]) == max(tokens, used + 1), (tokens, text)
    return text


def padding_lines(number: int) -> str:
    """The Padding lab's batch, different each time: a short line and LAB_LINES - 1 long ones (cut to
    PAD_LENGTH). Long lines keep the shared tokenizer busy, set to truncate at 8, for longer."""
    long = " ".join(WORDS * 3)
    return "\n".join([f"Short {number}.", *(f"Round {number} line {i}: {long}" for i in range(1, LAB_LINES))])


@dataclass(frozen=True)
class Step:
    page: str
    text: str


def plans(tokenizer, sessions: int, inputs: int, seed: int) -> list[list[Step]]:
    """Each session's steps: the next page and a new text of one of LENGTHS tokens."""
    rng = random.Random(seed)
    return [
        [Step(PAGES[(number + step) % len(PAGES)],
              input_text(tokenizer, number, step, LENGTHS[(number * 7 + step) % len(LENGTHS)], rng))
         for step in range(inputs)]
        for number in range(sessions)
    ]  # fmt: skip


# --- the burst -----------------------------------------------------------------------------------


@dataclass
class Observation:
    """One script run one session asked for: what it was, how long it took, what the server drew."""

    session: int
    page: str  # a PAGES entry or PADDING_LAB
    kind: str  # "open" (first load), "switch" (page change, same inputs) or "typed" (a new input)
    seconds: float
    typed: str | None = None  # the text this run typed
    error: str | None = None  # exception element, failed run or timeout
    run: Run | None = field(default=None, repr=False)


class Recorder:
    def __init__(self, timeout: float):
        self.timeout = timeout
        self.observations: list[Observation] = []
        self.connections: dict[int, list[Session]] = {}  # every tab a session opened, in order

    def connected(self, number: int, session: Session) -> Session:
        self.connections.setdefault(number, []).append(session)
        return session

    async def run(self, session: int, page: str, kind: str, request, typed: str | None = None) -> Run | None:
        """Await one run and record it; None (recorded as an error) when it failed or timed out."""
        started = time.perf_counter()
        try:
            run = await request
        except TimeoutError:
            self.observations.append(
                Observation(
                    session,
                    page,
                    kind,
                    time.perf_counter() - started,
                    typed,
                    f"timeout: no message for {self.timeout:.0f} s",
                )
            )
            return None
        except Exception as error:  # a failed run or a closed connection: the session ends here
            self.observations.append(
                Observation(
                    session, page, kind, time.perf_counter() - started, typed, f"{type(error).__name__}: {error}"[:300]
                )
            )
            return None
        seconds = time.perf_counter() - started
        problem = "; ".join(f"exception {e.type}: {e.message[:200]}" for e in run.exceptions) or None
        self.observations.append(Observation(session, page, kind, seconds, typed, problem, run))
        return run


async def take_step(recorder: Recorder, number: int, session: Session, run: Run, step: Step) -> Run | None:
    """Move to the step's page (unless there) and type its text; None when a run failed or had no text box."""
    if step.page != session.page:
        opened = session.open(step.page, PAGE_QUERY.get(step.page, ""), timeout=recorder.timeout)
        switched = await recorder.run(number, step.page, "switch", opened)
        if switched is None:
            return None
        run = switched
    box = run.widget("a" if step.page == "next_sentence" else "text")
    if box is None:
        recorder.observations.append(Observation(number, step.page, "typed", 0.0, step.text, "no text box"))
        return None
    typed = session.run({box.id: step.text}, timeout=recorder.timeout)
    return await recorder.run(number, step.page, "typed", typed, typed=step.text)


async def student(url: str, number: int, steps: list[Step], recorder: Recorder) -> None:
    """Open the first page, then for each step move to its page and type its text."""
    async with Session.connect(url, steps[0].page, PAGE_QUERY.get(steps[0].page, "")) as session:
        recorder.connected(number, session)
        run = await recorder.run(number, session.page, "open", session.run(timeout=recorder.timeout))
        for step in steps:
            if run is None:
                return
            run = await take_step(recorder, number, session, run, step)


async def padding_student(
    url: str, number: int, recorder: Recorder, others_done: asyncio.Event, limit: int, pause: float
) -> None:
    """The Padding lab (max_length 8, truncation on) with new lines until the other sessions are done,
    ``pause`` seconds between batches (0: each batch as soon as the last one is shown)."""
    async with Session.connect(url, "tokenizer", PAD_QUERY) as session:
        recorder.connected(number, session)
        run = await recorder.run(number, PADDING_LAB, "open", session.run(timeout=recorder.timeout))
        for round_number in range(limit):
            if run is None or others_done.is_set():
                return
            run = await type_padding_batch(recorder, number, session, run, round_number, pause)


async def type_padding_batch(
    recorder: Recorder, number: int, session: Session, run: Run, round_number: int, pause: float
) -> Run | None:
    """Type the Padding lab's batch of ``round_number`` (after ``pause`` seconds, except the first)."""
    if pause and round_number:
        await asyncio.sleep(pause)
    lines = padding_lines(round_number)
    typed = session.run({run.widget("lines").id: lines}, timeout=recorder.timeout)
    return await recorder.run(number, PADDING_LAB, "typed", typed, typed=lines)


async def classroom(
    url: str,
    steps: list[list[Step]],
    recorder: Recorder,
    padding_limit: int,
    padding_pause: float = 0.0,
    one: Callable[[str, int, list[Step], Recorder], Awaitable[None]] = student,
    lab: Callable[[str, int, Recorder, asyncio.Event, int, float], Awaitable[None]] = padding_student,
) -> float:
    """Every session at once (each ``one`` student, and the ``lab`` student); returns the wall time until
    the last (non-padding) session finished. ``padding_limit`` 0: no session in the Padding lab."""
    others_done = asyncio.Event()
    started = time.perf_counter()

    async def everyone() -> float:
        await asyncio.gather(*(one(url, n, s, recorder) for n, s in enumerate(steps)))
        others_done.set()
        return time.perf_counter() - started

    in_lab = [lab(url, len(steps), recorder, others_done, padding_limit, padding_pause)] if padding_limit else []
    wall, *_ = await asyncio.gather(everyone(), *in_lab)
    return wall


def burst(
    url: str,
    steps: list[list[Step]],
    recorder: Recorder,
    seconds: float,
    padding_limit: int,
    padding_pause: float = 0.0,
) -> tuple[float, bool]:
    """Run the class (in a thread of its own: the caller may hold an event loop); (wall, finished in time)."""

    async def bounded() -> tuple[float, bool]:
        started = time.perf_counter()
        try:
            return await asyncio.wait_for(classroom(url, steps, recorder, padding_limit, padding_pause), seconds), True
        except TimeoutError:
            return time.perf_counter() - started, False

    return run_to_end(bounded())


# --- the reference: transformers directly, in this process -----------------------------------------


class Reference:
    """The expected results, from this process's own tokenizer and model (same folder, same cap)."""

    def __init__(self, folder: str, cap: int | None):
        from transformers import AutoTokenizer, BertForPreTraining

        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.model = BertForPreTraining.from_pretrained(folder, attn_implementation="eager").eval()
        positions = self.model.config.max_position_embeddings
        self.cap = min(cap, positions) if cap else positions
        self._outputs: dict[tuple[str, str], dict] = {}
        self._bare_times: dict[tuple[str, str], BarePassTimes] = {}

    def encode(self, text: str, text_b: str = "") -> dict:
        enc = self.tokenizer(text, text_b or None, truncation=True, max_length=self.cap, return_offsets_mapping=True)
        full = len(self.tokenizer(text, text_b or None)["input_ids"])
        return {"ids": enc["input_ids"], "types": enc["token_type_ids"], "offsets": enc["offset_mapping"],
                "word_ids": enc.word_ids(), "full_length": full}  # fmt: skip

    def outputs(self, text: str, text_b: str = "") -> dict:
        """Tokens and one forward pass (attentions, hidden states, MLM probabilities, P(IsNext)); kept until ``forget``."""
        key = (text, text_b)
        if key not in self._outputs:
            enc = self.encode(text, text_b)
            ids = torch.tensor([enc["ids"]])
            with torch.inference_mode():
                out = self.model(input_ids=ids, token_type_ids=torch.tensor([enc["types"]]),
                                 output_attentions=True, output_hidden_states=True)  # fmt: skip
            masks = [i for i, t in enumerate(enc["ids"]) if t == self.tokenizer.mask_token_id]
            enc.update(
                tokens=self.tokenizer.convert_ids_to_tokens(enc["ids"]),
                attentions=[a[0].numpy() for a in out.attentions],
                hidden=torch.stack(out.hidden_states)[:, 0].numpy(),
                mlm=torch.softmax(out.prediction_logits[0, masks], dim=-1).numpy(),
                p_is_next=float(torch.softmax(out.seq_relationship_logits[0], dim=-1)[0]),
            )
            self._outputs[key] = enc
        return self._outputs[key]

    def forget(self, keep: Iterable[tuple[str, str]] = ()) -> None:
        kept = set(keep)
        self._outputs = {k: v for k, v in self._outputs.items() if k in kept}

    def word_vectors(self, sentence: str, word: str) -> list[np.ndarray]:
        """(layers + 1, hidden) per whole-word occurrence of ``word`` (any case): the mean of its pieces."""
        out = self.outputs(sentence)
        pieces: dict[int, list[int]] = defaultdict(list)
        for position, word_id in enumerate(out["word_ids"]):
            if word_id is not None:
                pieces[word_id].append(position)
        found = []
        for positions in pieces.values():
            start, end = out["offsets"][positions[0]][0], out["offsets"][positions[-1]][1]
            if sentence[start:end].lower() == word.lower():
                found.append(out["hidden"][:, positions].mean(axis=1))
        return found

    def bare_forward(self, bundle, text: str, text_b: str = "", threads: int | None = None) -> tuple[float, float]:
        """A ``bundle.model.bert(input_ids)`` call on the capped input (the floor of serving it), with torch on
        ``threads`` threads (None: as set): (wall seconds, CPU seconds of all this process's threads) of the faster
        of two, so that a moment of other load on the machine does not inflate the floor."""
        input_ids = torch.tensor([self.encode(text, text_b)["ids"]])
        times = []
        with torch.inference_mode(), threads_set_to(threads) if threads else nullcontext():
            for _ in range(2):
                started, cpu = time.perf_counter(), time.process_time()
                bundle.model.bert(input_ids)
                times.append((time.perf_counter() - started, time.process_time() - cpu))
        return min(times)

    def bare_pass_times(self, bundle, inputs: Iterable[tuple[str, str]]) -> BarePassTimes:
        """The bare passes of ``inputs``, each timed once (a run reusing inputs measures only new ones)."""
        if not self._bare_times:
            self.bare_forward(bundle, "warm up")
            self.bare_forward(bundle, "warm up", threads=1)
        for item in sorted(set(inputs) - self._bare_times.keys()):
            (wall, cpu), (one_core, _) = self.bare_forward(bundle, *item), self.bare_forward(bundle, *item, threads=1)
            self._bare_times[item] = BarePassTimes(wall, cpu, one_core)
        found = [self._bare_times[item] for item in set(inputs)]
        return BarePassTimes(*(sum(getattr(t, column.name) for t in found) for column in fields(BarePassTimes)))


@dataclass(frozen=True)
class BarePassTimes:
    """Σ bare forward passes: with torch's threads on all cores (wall and CPU seconds), and on one core each."""

    seconds: float
    cpu_seconds: float
    one_core_seconds: float

    def facts(self, wall: float, cores: int) -> dict[str, float]:
        """The Summary's efficiency fields for a burst of ``wall`` seconds on ``cores`` cores.

        The ideal p95, Σ bare forwards ÷ cores, is the burst's time with each bare pass on a core of its own:
        so the efficiency beside it counts the passes on one core each. The all-cores figure is stricter: a
        pass already on every core leaves a server nothing to overlap, and no schedule gets past 100 %.
        """
        return {
            "bare_forward_seconds": self.seconds,
            "bare_forward_cpu_seconds": self.cpu_seconds,
            "bare_forward_one_core_seconds": self.one_core_seconds,
            "serving_efficiency": self.one_core_seconds / wall if wall else float("nan"),
            "serving_efficiency_all_cores": self.seconds / wall if wall else float("nan"),
            "ideal_p95_seconds": self.one_core_seconds / cores,
        }


@contextmanager
def threads_set_to(count: int) -> Iterator[None]:
    """Torch on ``count`` threads inside, back to what it was after."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# --- checking what each run showed ----------------------------------------------------------------


def shown_inputs(observation: Observation) -> tuple[str, str] | None:
    """The input the page analysed, as its own input boxes show it: (text, sentence B)."""
    run = observation.run
    if observation.page == PADDING_LAB:
        return None
    if observation.page == "next_sentence":
        return run.text_value("a") or "", (run.text_value("b") or "").strip()
    text = run.text_value("text") or ""
    return text, "" if observation.page in ("fill_mask", "senses") else (run.text_value("b") or "").strip()


def close(shown: np.ndarray, expected: np.ndarray, tolerance: float = TOLERANCE) -> bool:
    return shown.shape == expected.shape and bool(np.allclose(shown, expected, atol=tolerance, rtol=1e-3))


def truncation_problem(run: Run, ref: Reference, out: dict) -> list[str]:
    """An input over the cap must be cut to it and say so."""
    if out["full_length"] <= ref.cap:
        return []
    notices = [a.body for a in run.drawn("alert") if f"{ref.cap} tokens are analysed" in a.body]
    return [] if notices else [f"no truncation notice for {out['full_length']} tokens over the cap {ref.cap}"]


def check_tokenizer(run: Run, ref: Reference, text: str, text_b: str) -> list[str]:
    out = ref.encode(text, text_b)
    table = run.table("token_table")
    if table is None:
        return ["no token table"]
    shown = table["id"].tolist()
    problems = [] if shown == out["ids"] else [f"token ids: {len(shown)} shown, {len(out['ids'])} expected"]
    return problems + truncation_problem(run, ref, out)


def check_anatomy(run: Run, ref: Reference, text: str, text_b: str) -> list[str]:
    out = ref.encode(text, text_b)
    table = run.table("embedding_norms")
    if table is None:
        return ["no embedding table"]
    tokens = ref.tokenizer.convert_ids_to_tokens(out["ids"])
    problems = [] if table["token"].tolist() == tokens else [f"tokens: {len(table)} shown, {len(tokens)} expected"]
    return problems + truncation_problem(run, ref, out)


def check_fill_mask(run: Run, ref: Reference, text: str, text_b: str) -> list[str]:
    if "[MASK]" not in text:
        return []  # the page asks for a mask first
    out = ref.outputs(text)
    problems = []
    for number, probabilities in enumerate(out["mlm"], start=1):
        table = run.table(f"table-fill-mask-{number}")
        if table is None:
            problems.append(f"no guesses for mask {number}")
            continue
        expected = probabilities[table["token_id"].to_numpy()]
        if not close(table["probability"].to_numpy(dtype=float), expected, 1e-6):
            problems.append(f"mask {number}: probabilities differ")
        if table["probability"].iloc[0] < probabilities.max() * (1 - 1e-3):
            problems.append(f"mask {number}: the top guess is not the most probable token")
    if run.table(f"table-fill-mask-{len(out['mlm']) + 1}") is not None:
        problems.append("more masks shown than the input has")
    return problems + truncation_problem(run, ref, out)


def check_next_sentence(run: Run, ref: Reference, text: str, text_b: str) -> list[str]:
    out = ref.outputs(text, text_b)
    problems = []
    segments = run.table("segments-table")  # drawn when its expander is open
    if segments is not None and segments["token"].tolist() != out["tokens"]:
        problems.append(f"segments: {len(segments)} tokens shown, {len(out['tokens'])} expected")
    shown = run.metrics().get("P(IsNext)")
    if shown is None or abs(float(shown) - out["p_is_next"]) > 1e-4 + 5e-5:
        problems.append(f"P(IsNext) {shown}, expected {out['p_is_next']:.4f}")
    return problems + truncation_problem(run, ref, out)


HEATMAP_TITLE = re.compile(r"^Encoder layer (\d+), head (\d+)$")


def check_attention(run: Run, ref: Reference, text: str, text_b: str) -> list[str]:
    out = ref.outputs(text, text_b)
    charts = [c for c in run.charts() if c.id.endswith("-heatmap")]
    if not charts:
        return ["no attention heatmap"]
    figure = plotly_figure(charts[0])
    title = figure["layout"].get("title", {}).get("text", "")
    chosen = HEATMAP_TITLE.match(title)
    if not chosen:
        return [f"unexpected heatmap: {title!r}"]
    layer, head = map(int, chosen.groups())
    shown = plotly_array(figure["data"][0]["z"])
    expected = out["attentions"][layer][head]
    problems = [] if close(shown, expected) else [f"heatmap {shown.shape} differs from the expected {expected.shape}"]
    return problems + truncation_problem(run, ref, out)


def senses_layer(run: Run, num_layers: int) -> range:
    """The hidden states the page shows (its caption: "Showing hidden state N (…)." / "mean of the last K …")."""
    for markdown in run.drawn("markdown"):
        if markdown.body.startswith("Showing "):
            if found := re.search(r"mean of the last (\d+)", markdown.body):
                return range(num_layers + 1 - int(found.group(1)), num_layers + 1)
            if found := re.search(r"hidden state (\d+)", markdown.body):
                return range(int(found.group(1)), int(found.group(1)) + 1)
    raise ValueError("no layer caption")


def check_senses(run: Run, ref: Reference, text: str, text_b: str) -> list[str]:
    from bertlens.sense_presets import PRESETS  # the sentences the page's default preset lists (data only)

    sentences = [item.sentence for item in PRESETS["field"].sentences]
    if SENSE_WORD in text.lower() and text.strip() not in sentences:
        sentences.append(text.strip())
    layers = list(senses_layer(run, ref.model.config.num_hidden_layers))
    points = [(s, v[layers].mean(axis=0)) for s in sentences for v in ref.word_vectors(s, SENSE_WORD)]
    table = run.table("senses-neighbours")
    if table is None:
        return ["no neighbours table"]
    problems = []
    if table["point"].max() != len(points):
        problems.append(f"{table['point'].max()} occurrences shown, {len(points)} expected")
    vectors = np.stack([v for _, v in points])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for row in table.itertuples(index=False):
        i, j = row.point - 1, row.neighbour - 1
        if (
            max(i, j) >= len(points)
            or not excerpt_of(row.sentence, points[i][0])
            or abs(row.cosine - unit[i] @ unit[j]) > 1e-3
        ):
            problems.append(f"neighbour row {row.point}→{row.neighbour} differs")
            break
    return problems


def excerpt_of(shown: str, sentence: str) -> bool:
    """Whether a table's sentence cell is the sentence, or an excerpt of it ("…" where cut)."""
    return all(part in sentence for part in shown.split("…"))


def check_padding_lab(run: Run, ref: Reference, lines: str | None) -> list[str]:
    if lines is None:
        return []
    sentences = [line.strip() for line in lines.splitlines() if line.strip()]
    expected = ref.tokenizer(sentences, padding="max_length", truncation=True, max_length=PAD_LENGTH)["input_ids"]
    charts = [c for c in run.charts() if c.id.endswith("-ids_heatmap")]
    if not charts:
        return ["no padded-ids heatmap"]
    shown = plotly_array(plotly_figure(charts[0])["data"][0]["z"])
    return [] if close(shown, np.asarray(expected, dtype=float), 0) else [f"padded ids {shown.shape} differ"]


CHECKS: dict[str, Callable[[Run, Reference, str, str], list[str]]] = {
    "tokenizer": check_tokenizer,
    "anatomy": check_anatomy,
    "fill_mask": check_fill_mask,
    "next_sentence": check_next_sentence,
    "attention": check_attention,
    "senses": check_senses,
}


def model_inputs(observation: Observation, shown: tuple[str, str]) -> list[tuple[str, str]]:
    """The model inputs a page's default view runs the model on (for the floor: Σ bare forwards)."""
    text, text_b = shown
    run = observation.run
    if observation.page in ("anatomy", "attention"):
        return [(text, text_b)]
    if observation.page == "fill_mask":
        return [(text, "")] if "[MASK]" in text else []
    if observation.page == "next_sentence":  # the verdict, then the ranking of each candidate B, then the pairs
        candidates = [line.strip() for line in (run.text_value("candidates") or "").splitlines() if line.strip()]
        pairs = run.widget("pairs")
        rows = []
        if pairs is not None:
            from scripts.streamlit_client import dataframe

            rows = [(a, b) for a, b, _ in dataframe(pairs).itertuples(index=False)]
        return [(text, text_b), *((text, c) for c in candidates), *rows]
    if observation.page == "senses":
        from bertlens.sense_presets import PRESETS

        preset = PRESETS["field"]
        listed = [(item.sentence, "") for item in preset.sentences] + [(r, "") for r in preset.references]
        return listed + ([(text.strip(), "")] if SENSE_WORD in text.lower() else [])
    return []


@dataclass
class Verdict:
    page: str
    kind: str
    seconds: float
    error: str | None
    wrong: list[str]
    capped: bool  # the input was longer than the cap (and the check covered its truncation)


def over_time_limit(run: Run) -> bool:
    """Whether the run answered with the engine's per-request time limit message (``RequestTimeout``)."""
    return any("per-request time limit" in alert.body for alert in run.drawn("alert"))


def check_all(observations: list[Observation], ref: Reference, deadline: float) -> tuple[list[Verdict], set]:
    """Check every run against the reference, grouped by input (one reference forward each); also
    collect the distinct model inputs. Runs left when ``deadline`` passes are marked unchecked."""
    verdicts, inputs = [], set()
    groups: dict[tuple[str, str] | None, list[Observation]] = defaultdict(list)
    for observation in observations:
        groups[shown_inputs(observation) if observation.run else None].append(observation)
    for shown, group in groups.items():
        for observation in group:
            wrong: list[str] = []
            capped, error = False, observation.error
            if observation.run is not None:
                if over_time_limit(observation.run):  # the engine's per-request budget answered: not wrong
                    error = "timeout: the page showed the per-request time limit message"
                elif time.monotonic() > deadline:
                    wrong = ["unchecked: time limit"]
                elif observation.page == PADDING_LAB:
                    wrong = check_padding_lab(observation.run, ref, observation.typed)
                else:
                    text, text_b = shown
                    if observation.typed is not None and text != observation.typed:
                        wrong.append("the page shows another input than the one typed")
                    wrong += CHECKS[observation.page](observation.run, ref, text, text_b)
                    capped = ref.encode(text, text_b)["full_length"] > ref.cap
                    inputs.update(model_inputs(observation, shown))
            verdicts.append(Verdict(observation.page, observation.kind, observation.seconds, error, wrong, capped))
            observation.run = None  # free the drawn elements
        ref.forget(keep=[(s, "") for s in ref_sense_sentences()])
    return verdicts, inputs


def ref_sense_sentences() -> list[str]:
    from bertlens.sense_presets import PRESETS

    return [item.sentence for item in PRESETS["field"].sentences]


# --- the report ----------------------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))] if ordered else float("nan")


def seconds_text(value: float) -> str:
    return "—" if math.isnan(value) else (f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s")


@dataclass
class Summary:
    sessions: int
    inputs_per_session: int
    padding_lab_runs: int  # new batches typed in the Padding lab meanwhile
    model: str
    hosted: bool
    token_cap: int | None
    finished_in_time: bool
    burst_seconds: float
    runs: int
    errors: int
    timeouts: int
    wrong: int
    capped_runs: int
    model_loads: int | None
    peak_rss_gib: float | None
    distinct_model_inputs: int
    bare_forward_seconds: float  # Σ bare passes, torch on all cores
    bare_forward_cpu_seconds: float  # their own CPU time (all threads)
    bare_forward_one_core_seconds: float  # Σ bare passes, torch on one thread
    serving_efficiency: float  # Σ one-core bare passes ÷ burst wall time (see BarePassTimes.facts)
    serving_efficiency_all_cores: float  # Σ all-cores bare passes ÷ burst wall time
    ideal_p95_seconds: float
    cores: int
    torch_threads: int
    server_cpu_seconds: float | None = None  # the server process's CPU time during the burst (None: not read)
    server_cpu_by_thread: dict[str, float] = field(default_factory=dict)  # that time by kind of thread (CPU_SHARES)
    warm_start_seconds: float | None = None  # the server warmed before the class arrived (None: it came cold)
    padding_pause: float = 0.0  # seconds the Padding-lab student waited between batches
    pages: dict[str, dict] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)  # a few wrong results and errors, for reading


def summarise(verdicts: list[Verdict], **facts) -> Summary:
    rows: dict[str, dict] = {}
    groups: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        groups[v.page if v.kind == "typed" else "page open / switch (inputs kept)"].append(v)
    order = [*PAGES, PADDING_LAB]
    for name, group in sorted(
        groups.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)
    ):
        times = [v.seconds for v in group if v.error is None]
        rows[name] = {
            "runs": len(group),
            "p50_seconds": percentile(times, 0.5),
            "p95_seconds": percentile(times, 0.95),
            "errors": sum(v.error is not None for v in group),
            "wrong": sum(bool(v.wrong) for v in group),
        }
    examples = [f"{v.page}/{v.kind}: {v.error}" for v in verdicts if v.error][:5]
    examples += [f"{v.page}/{v.kind}: {'; '.join(v.wrong)}" for v in verdicts if v.wrong][:10]
    return Summary(
        runs=len(verdicts),
        errors=sum(v.error is not None for v in verdicts),
        timeouts=sum(bool(v.error and v.error.startswith("timeout")) for v in verdicts),
        wrong=sum(bool(v.wrong) for v in verdicts),
        capped_runs=sum(v.capped and not v.wrong and v.error is None for v in verdicts),
        padding_lab_runs=sum(v.page == PADDING_LAB and v.kind == "typed" for v in verdicts),
        pages=rows,
        examples=examples,
        **facts,
    )


def markdown(summary: Summary) -> str:
    lines = ["| page (runs that typed a new input) | runs | p50 | p95 | errors | wrong results |",
             "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for name, row in summary.pages.items():
        lines.append(f"| {name} | {row['runs']} | {seconds_text(row['p50_seconds'])} | "
                     f"{seconds_text(row['p95_seconds'])} | {row['errors']} | {row['wrong']} |")  # fmt: skip
    rss = "n/a" if summary.peak_rss_gib is None else f"{summary.peak_rss_gib:.2f} GiB"
    loads = "n/a" if summary.model_loads is None else str(summary.model_loads)
    cap = f"{summary.token_cap} tokens" if summary.token_cap else "none (the model's 512)"
    lab = "nobody in the Padding lab"
    if summary.padding_lab_runs:
        pace = f", one every {summary.padding_pause:g} s or more" if summary.padding_pause else ""
        lab = f"1 session in the Padding lab (max_length {PAD_LENGTH}, truncation on): {summary.padding_lab_runs} batches{pace}"
    lines += [
        "",
        "|  |  |",
        "| --- | --- |",
        f"| sessions × inputs | {summary.sessions} × {summary.inputs_per_session}, and "
        f"{lab} |",
        f"| model / hosted / token cap | {summary.model} / {'on' if summary.hosted else 'off'} / {cap} |",
        f"| before the class | {'cold server: the class triggers the model load and warm start' if summary.warm_start_seconds is None else f'model loaded and presets warmed ({summary.warm_start_seconds:.1f} s)'} |",
        f"| burst wall time | {summary.burst_seconds:.1f} s{'' if summary.finished_in_time else ' (stopped at the time limit)'} |",
        f"| script runs | {summary.runs} |",
        f"| errors (exception elements, failed runs, timeouts) | {summary.errors} (timeouts: {summary.timeouts}) |",
        f"| wrong results (differ from the single-user reference) | {summary.wrong} |",
        f"| runs over the cap, correctly cut to it | {summary.capped_runs} |",
        f"| model loads (server log) | {loads} |",
        f"| peak server RSS (VmHWM) | {rss} |",
        f"| Σ bare forward passes ({summary.distinct_model_inputs} distinct model inputs), torch on one core each / on "
        f"all {summary.cores} | {summary.bare_forward_one_core_seconds:.1f} s / {summary.bare_forward_seconds:.1f} s |",
        f"| serving efficiency = Σ bare forwards (one core each) ÷ burst wall time | {summary.serving_efficiency:.0%} |",
        f"| the same with each bare pass on all {summary.cores} cores (stricter: no schedule gets past 100 %) "
        f"| {summary.serving_efficiency_all_cores:.0%} |",
        f"| ideal p95 = Σ bare forwards (one core each) ÷ {summary.cores} cores | {seconds_text(summary.ideal_p95_seconds)} |",
    ]  # fmt: skip
    if summary.server_cpu_seconds:
        cpu, passes = summary.server_cpu_seconds, summary.bare_forward_cpu_seconds
        lines += [
            f"| server CPU during the burst | {cpu:.1f} core-s ({cpu / summary.burst_seconds / summary.cores:.0%} of "
            f"{summary.cores} cores); the bare passes alone: {passes:.1f} core-s, the rest {cpu - passes:.1f} core-s |",
            f"| highest all-cores efficiency that much server work allows = Σ bare forwards (all cores) × "
            f"{summary.cores} cores ÷ server CPU "
            f"| {summary.bare_forward_seconds * summary.cores / cpu:.0%} |",
        ]
        if summary.server_cpu_by_thread:
            shares = "; ".join(f"{name}: {seconds:.1f}" for name, seconds in summary.server_cpu_by_thread.items())
            lines.append(f"| server CPU by thread, told apart by their lives (core-s, approximate) | {shares} |")
    if summary.examples:
        lines += ["", "First problems seen:", *(f"- {e}" for e in summary.examples)]
    return "\n".join(lines)


# --- the whole run -------------------------------------------------------------------------------


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
    from bertlens.models import load_model

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

    def out_of_time(*_) -> None:
        raise TimeoutError(f"stopped after --max-seconds {args.max_seconds:.0f} s")

    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(int(args.max_seconds) + 60)  # last resort; the phases watch the deadline themselves
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
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            from bertlens.synthetic import random_bert_config, save_random_bert

            model = str(save_random_bert(Path(tmp) / "bert-base-uncased-random", random_bert_config()))
        if args.url:
            summary = measure(args.url, model, options, None, args.pid, time.monotonic() + args.max_seconds)
        else:
            summary = run_class(model, options, Path(tmp) / "server.log")
    print(markdown(summary))
    if args.json:
        args.json.write_text(json.dumps(asdict(summary), indent=2, default=str))


if __name__ == "__main__":
    main()
