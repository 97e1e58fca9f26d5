"""Benchmark BERT Lens against the floor (a bare forward pass). Not part of the tests.

    python -m scripts.benchmark                 # full run (a few minutes on 2 cores)
    python -m scripts.benchmark --repeats 1     # quicker, noisier

Uses a randomly initialised model with bert-base-uncased's exact configuration, saved to a
temporary folder and loaded through BERT Lens's real loading path (speed and memory do not depend
on the weight values; nothing is downloaded). Prints Markdown tables: machine, timings per input
length (16, 128, 512 tokens) with each page's compute as a ratio to the floor, cached repeats,
model load time, peak memory (separate subprocesses: ``scripts/benchmark_memory.py``), transformers' fill-mask pipeline, and the
bytes the attention page sends to the browser. Compare ratios, not absolute times.

Then, against a real server (``scripts/visits.py``): the server time of a cached visit (same
session, new session; shipped options vs before them) and each page's browser settle time beside a
bare Streamlit page (headless Chromium).

Targets: page compute <= 1.2 x floor; cached repeat <= 50 ms; peak memory <= 1.2 GiB with one
bert-base-sized model; attention payload <= 5 MB; a cached visit <= 60 ms of server time; every
page settles within 1.5 x a bare Streamlit page.
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from urllib.parse import urlencode

# First: its settings (offline, quiet, not hosted) come before torch, transformers and Streamlit load.
from scripts.benchmark_memory import GIB, WORDS, peak_rss, sentence_of  # isort: skip

import streamlit
import torch
import transformers
from streamlit.testing.v1 import AppTest
from transformers import BertModel, PreTrainedTokenizerBase, pipeline

from bertlens import anatomy, attention, compare, influence, mlm, nsp, positions, senses, steps
from bertlens.analysis import analyze, encode
from bertlens.family import encoder_of
from bertlens.models import ModelBundle, load_model
from bertlens.pages import TOOL_PAGES
from bertlens.sense_presets import PRESETS
from bertlens.senses import sentence_vector_cache
from bertlens.synthetic import random_bert_config, save_random_bert
from components.services import cache
from components.services.models import cached_bundle
from components.views.attention import figures as attention_figures
from scripts import visits

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (16, 128, 512)
TARGET_RATIO, TARGET_CACHED_MS, TARGET_GIB, TARGET_PAYLOAD_MB = 1.2, 50, 1.2, 5


# --- inputs -------------------------------------------------------------------------------------


def pair_of(tokenizer: PreTrainedTokenizerBase, tokens: int) -> tuple[str, str]:
    """Sentences A and B that together make ``tokens`` tokens ([CLS] A [SEP] B [SEP])."""
    a_words = (tokens - 3) // 2
    b_words = tokens - 3 - a_words - 1
    a = " ".join(WORDS[i % len(WORDS)] for i in range(a_words))
    b = " ".join(WORDS[(i + 5) % len(WORDS)] for i in range(b_words)) + "."
    assert len(encode(tokenizer, a, b).input_ids) == tokens, tokens
    return a, b


# --- timing -------------------------------------------------------------------------------------


def seconds(work: Callable[[], object], repeats: int) -> float:
    """Best wall time of ``repeats`` calls after one warm-up call (the least disturbed by other processes)."""
    work()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def once(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def ms(value: float) -> str:
    return f"{value * 1000:,.1f} ms" if value < 1 else f"{value:,.2f} s"


def verdict(ok: bool) -> str:
    return "✅" if ok else "❌"


# --- the machine --------------------------------------------------------------------------------


def machine() -> list[tuple[str, str]]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB
    except (ValueError, OSError):
        ram = float("nan")
    return [
        ("CPU", cpu),
        ("cores (os.cpu_count)", str(os.cpu_count())),
        ("RAM", f"{ram:.1f} GiB"),
        ("torch threads", str(torch.get_num_threads())),
        ("python / torch / transformers / streamlit", f"{platform.python_version()} / {torch.__version__} / "
         f"{transformers.__version__} / {streamlit.__version__}"),
        ("OS", platform.platform()),
    ]  # fmt: skip


# --- each page's compute: the core calls its default view makes for a newly typed input ---------


def page_work(bundle: ModelBundle, text: str, pair: tuple[str, str]) -> dict[str, Callable[[], object]]:
    """Uncached: what each page computes when a user types a new sentence (default view)."""
    tokenizer = bundle.tokenizer
    a, b = pair
    candidates = ["I think I'll go for a walk in the park.", "Deep Learning is a branch of Machine Learning."]
    compare_text = text.replace("the", "a", 1)  # one word changed, the same length

    def tokenizer_page() -> object:  # the page's own computation, uncached
        return inspect.unwrap(cache.token_view)(cache.query(bundle.name, text))

    def anatomy_page() -> object:
        analysis = analyze(bundle, text)
        return anatomy.embedding_parts(bundle, analysis), anatomy.pooler_check(bundle, analysis)

    def fill_mask_page() -> object:
        return mlm.top_k_guesses(analyze(bundle, text), tokenizer, 10)

    def next_sentence_verdict() -> object:
        analysis = analyze(bundle, a, b)
        return nsp.next_sentence(analysis), nsp.segments_table(analysis)

    def next_sentence_page() -> object:  # the verdict, then the ranking: two more (A, candidate) pairs, batched
        return next_sentence_verdict(), nsp.rank_candidates(bundle, a, candidates)

    def attention_page() -> object:  # the default tab: the heatmap of layer 0, head 0
        analysis = analyze(bundle, text)
        choice = attention_figures.Choice()
        matrix = attention.layer_stack(analysis.attentions, choice.head_or_mean)[choice.layer]
        return attention_figures.matrix_figure(matrix, analysis.encoding, choice.title(bundle.capabilities.num_heads))

    def attention_every_tab() -> object:
        analysis = analyze(bundle, text)
        return attention.head_statistics(analysis.attentions, analysis.encoding), attention_figures.page_figures(
            analysis
        )

    def attention_step_by_step() -> (
        object
    ):  # no extra pass: one head's Q/K/V slice recomputed from hidden_states[layer]
        analysis = analyze(bundle, text)
        return steps.head_steps(bundle, analysis, 0, 0, 1)

    def attention_compare() -> object:  # one extra pass: the second sentence
        first, second = analyze(bundle, text), analyze(bundle, compare_text)
        alignment = compare.align_tokens(first.encoding.tokens, second.encoding.tokens)
        return compare.attention_difference(first.attentions[0, 0], second.attentions[0, 0], alignment)

    def attention_mask_and_see() -> object:  # one extra pass: the input with one token hidden (the page's default)
        analysis = analyze(bundle, text)
        seen = influence.watch(bundle, analysis, "mask")
        hidden = seen.hideable[int(seen.attention_received(analysis.attentions[0, 0]).argmax())]
        return influence.mask_and_see(bundle, analysis, "mask", hide=hidden)

    def attention_mask_and_see_every_token() -> object:  # one extra batched pass of every variant (token budget)
        analysis = analyze(bundle, text)
        found = influence.mask_and_see(bundle, analysis, "mask")
        return influence.attention_received(analysis.attentions[0, 0], found)

    def fill_mask_every_layer() -> object:  # no extra pass: the MLM head on the mask's hidden state after every layer
        analysis = analyze(bundle, text)
        return steps.layer_guesses(bundle, analysis, 10)

    def anatomy_positions() -> object:  # no forward pass at all: read from the weights
        return positions.position_embeddings(bundle, 64)

    return {
        "tokenizer": tokenizer_page,
        "anatomy": anatomy_page,
        "fill-mask": fill_mask_page,
        "next sentence: verdict": next_sentence_verdict,
        "next sentence: verdict + ranking of 2 candidate Bs": next_sentence_page,
        "attention: default view (heatmap)": attention_page,
        "attention: every tab's figure + head statistics": attention_every_tab,
        "attention: step by step (one head, one query; no extra pass)": attention_step_by_step,
        "attention: compare two sentences (the second sentence's pass)": attention_compare,
        "attention: mask and see, one token (one extra pass)": attention_mask_and_see,
        f"attention: mask and see, every token in turn (variants batched, ≤ {influence.TOKEN_BUDGET} positions)": (
            attention_mask_and_see_every_token
        ),
        "fill-mask: guesses at every layer (no extra pass)": fill_mask_every_layer,
        "anatomy: position embeddings, 64 positions (no forward pass)": anatomy_positions,
    }


def senses_rows(bundle: ModelBundle, repeats: int) -> list[tuple[str, str]]:
    """The word-senses page's batch (the default preset) vs a bare batched forward of the same sentences."""
    preset = PRESETS["field"]
    sentences = [s.sentence for s in preset.sentences]
    batch = bundle.tokenizer(sentences, padding=True, return_tensors="pt")
    with torch.inference_mode():
        floor = seconds(
            lambda: encoder_of(bundle.model)(batch["input_ids"], attention_mask=batch["attention_mask"]), repeats
        )

    def page() -> object:  # as the page: the reference words are read in the sentences' own batched pass
        sentence_vector_cache(cached_bundle(bundle.name)).clear()  # read every sentence, as a new preset would
        words = inspect.unwrap(cache.word_vectors)(cache.query(bundle.name), preset.word, tuple(sentences),
                                                   tuple(preset.references[:10]))  # fmt: skip
        labels = [s.sense for s in preset.sentences]
        vectors = senses.at_layer(words.contextual, str(words.num_layers))
        return senses.project(vectors), senses.separation_by_layer(words.contextual, labels)

    compute = seconds(page, repeats)
    width = batch["input_ids"].shape[1]
    return [
        (f"word senses: bare batched forward ({len(sentences)} sentences × {width} tokens)", ms(floor)),
        ("word senses: page compute (vectors, projection, separation, reference words)",
         f"{ms(compute)} = {compute / floor:.2f} × floor {verdict(compute <= TARGET_RATIO * floor)}"),
    ]  # fmt: skip


# --- cached repeats -----------------------------------------------------------------------------


def cached_rows(folder: str, text: str) -> list[tuple[str, str]]:
    """The Streamlit cache hit: the second call of the cached functions, and a full page rerun (AppTest)."""
    rows = []
    cached: dict[str, Callable[[], object]] = {
        "cached_analysis (the shared forward pass)": lambda: cache.cached_analysis(folder, text),
        "fill-mask top-k (st.cache_data)": lambda: cache.mask_guesses(cache.query(folder, text), 10),
        "attention head statistics (st.cache_data)": lambda: cache.statistics(cache.query(folder, text)),
    }
    for name, call in cached.items():
        call()  # computes and stores
        hit = seconds(call, 5)
        rows.append((f"cache hit: {name}", f"{ms(hit)} {verdict(hit * 1000 <= TARGET_CACHED_MS)}"))
    os.environ["BERTLENS_MODEL"] = folder
    for page in TOOL_PAGES:
        at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=600)
        at.query_params["text"] = text
        first = once(at.run)
        rerun = seconds(at.run, 3)
        assert not at.exception, (page, at.exception)
        rows.append((f"page rerun, every cache hit (AppTest, whole script): {page}",
                     f"{ms(rerun)} (first run {ms(first)})"))  # fmt: skip
    return rows


# --- memory (each in its own process: scripts/benchmark_memory.py) ------------------------------


def memory_rows(folder: str) -> list[tuple[str, str]]:
    base, loaded, lens, seeds = (peak_rss(kind, folder) for kind in ("imports", "lens-load", "lens", "seeds"))
    return [
        ("peak RSS: python + torch + transformers imported, no model", f"{base / GIB:.2f} GiB"),
        ("peak RSS: BERT Lens — the model loaded, no analysis yet", f"{loaded / GIB:.2f} GiB"),
        ("peak RSS: BERT Lens — one BertForPreTraining, one analysis at 512 tokens",
         f"{lens / GIB:.2f} GiB {verdict(lens / GIB <= TARGET_GIB)}"),
        ("peak RSS: the seeds' way — BertModel + BertForMaskedLM + BertForNextSentencePrediction, "
         "a forward pass each at 512 tokens", f"{seeds / GIB:.2f} GiB ({seeds / lens:.2f} × BERT Lens)"),
    ]  # fmt: skip


# --- the table ----------------------------------------------------------------------------------


def markdown(rows: Sequence[tuple[str, ...]], header: tuple[str, ...]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--repeats", type=int, default=5, help="timed calls per measurement (the best counts; 512 tokens: at most 3)"
    )
    parser.add_argument("--skip-memory", action="store_true", help="skip the memory subprocesses")
    parser.add_argument("--skip-server", action="store_true", help="skip the cached-visit and browser-settle sections")
    parser.add_argument(
        "--only",
        metavar="TEXT",
        action="append",
        help="time only the page rows whose name contains TEXT (repeatable; and the floor); skip the other sections",
    )
    args = parser.parse_args()

    print("## Machine\n")
    print(markdown(machine(), ("", "")))
    with tempfile.TemporaryDirectory() as tmp:
        folder = str(save_random_bert(Path(tmp) / "bert-base-uncased-random", random_bert_config()))
        load = once(lambda: load_model(folder))
        bundle = cached_bundle(folder)  # the app's own cached instance (also used by the cached rows)
        # transformers' PreTrainedModel.eval is unannotated
        sdpa = BertModel.from_pretrained(folder, attn_implementation="sdpa").eval()  # type: ignore[no-untyped-call]
        fill_mask = pipeline("fill-mask", model=folder, tokenizer=folder, device=-1)
        baseline_rows = not args.only

        timing_rows = []
        for length in LENGTHS:
            repeats = min(args.repeats, 3) if length >= 512 else args.repeats
            text, pair = sentence_of(bundle.tokenizer, length), pair_of(bundle.tokenizer, length)
            input_ids = torch.tensor([encode(bundle.tokenizer, text).input_ids])
            with torch.inference_mode():
                floor = seconds(partial(encoder_of(bundle.model), input_ids), repeats)
            row = {"floor: encoder_of(bundle.model)(input_ids)": ms(floor)}
            if baseline_rows:
                with torch.inference_mode():
                    reference = seconds(partial(sdpa, input_ids), repeats)
                row["reference: BertModel forward, default SDPA attention"] = (
                    f"{ms(reference)} ({reference / floor:.2f} ×)"
                )
            shared = seconds(partial(analyze, bundle, text), repeats)
            row["analyze: the shared pass (attentions, hidden states, heads)"] = (
                f"{ms(shared)} ({shared / floor:.2f} ×)"
            )
            for page, work in page_work(bundle, text, pair).items():
                if args.only and not any(text in page for text in args.only):
                    continue
                compute = seconds(work, repeats)
                row[f"page compute: {page}"] = (
                    f"{ms(compute)} ({compute / floor:.2f} × {verdict(compute <= TARGET_RATIO * floor)}; "
                    f"{ms(compute - floor)} beyond the floor)"
                )
            if baseline_rows:
                baseline = seconds(partial(fill_mask, text, top_k=10), repeats)
                row["baseline: transformers pipeline('fill-mask'), top 10"] = (
                    f"{ms(baseline)} ({baseline / floor:.2f} ×)"
                )
            timing_rows.append(row)

        print(
            f"\n## Timings (best of {args.repeats} calls, 3 at 512 tokens; × = ratio to the floor; target ≤ {TARGET_RATIO} ×)\n"
        )
        names = list(timing_rows[0])
        print(markdown([(name, *(row[name] for row in timing_rows)) for name in names],
                       ("", *(f"{n} tokens" for n in LENGTHS))))  # fmt: skip
        if args.only:
            return

        print("\n## Word senses (the default preset, a batch)\n")
        print(markdown(senses_rows(bundle, args.repeats), ("", "")))

        print(f"\n## Cached repeats (128 tokens; target ≤ {TARGET_CACHED_MS} ms for a cache hit)\n")
        print(markdown(cached_rows(folder, sentence_of(bundle.tokenizer, 128)), ("", "")))

        analysis = analyze(bundle, sentence_of(bundle.tokenizer, 512))
        payload = attention_figures.page_payload(analysis)
        total = sum(payload.values())
        other = [("model load (load_model: config, tokenizer, weights, eval)", ms(load)),
                 ("attention page payload at 512 tokens, all figures (plotly JSON)",
                  f"{total / 1e6:.2f} MB {verdict(total / 1e6 <= TARGET_PAYLOAD_MB)}"),
                 *((f"… {name}", f"{size / 1e6:.2f} MB") for name, size in payload.items())]  # fmt: skip
        if not args.skip_memory:
            other += memory_rows(folder)
        print("\n## Load, payload and memory\n")
        print(markdown(other, ("", "")))
        if not args.skip_server:
            server_sections(folder)


def server_sections(folder: str) -> None:
    """Cached visits and browser settle against a real server (``scripts/visits.py``)."""
    query = urlencode({"text": "The students read a short story about the [MASK] near the river."})
    print(
        f"\n## Cached visits: server time ({visits.VISITS} visits each, median wall; CPU = server CPU per visit; "
        f"target ≤ {visits.TARGET_VISIT_MS} ms)\n"
    )
    print(markdown(visits.visit_rows(folder, query),
                   ("page: visit", "before (file watcher auto, no gc.freeze)", "shipped config", "speed-up")))  # fmt: skip
    settle = visits.settle_rows(folder, query)
    print(
        f"\n## Browser settle (headless Chromium, 1280×720, median of 5; target ≤ {visits.TARGET_SETTLE_RATIO} × bare)\n"
    )
    header = ("page", "opened in a new tab (× bare page)", "reached by a sidebar click in an open tab (× bare page)")
    print(markdown(settle, header) if settle else "Skipped: no Chromium or Playwright.")


if __name__ == "__main__":
    main()
