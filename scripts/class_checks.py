"""What each run of a class showed, checked against the reference (``scripts/class_reference.py``).

The token ids (tokenizer table, padding-lab heatmap), the tokens (anatomy's embedding table, the NSP segments
table; a model whose embeddings are not BERT's sum, as RoBERTa's single token type: the page's reason, no table), the attention heatmap of the layer/head shown, fill-mask probabilities (at the model's own mask token), P(IsNext)
(without an NSP head, as RoBERTa's: the page's reason, and no number), the word-senses
cosines, and the truncation notice for inputs over the cap. Leaked truncation shows as a short token list, a
small heatmap or changed values. Also collects the distinct model inputs the pages ran (for the floor).
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bertlens.anatomy import bert_like_embeddings
from bertlens.sense_presets import PRESETS
from scripts.class_reference import Reference
from scripts.class_sim import PAD_LENGTH, PADDING_LAB, SENSE_WORD, Observation
from scripts.streamlit_client import Run, dataframe, plotly_array, plotly_figure

TOLERANCE = 2e-4  # float32 results from the server vs this process (shown probabilities: 4 decimals)


def shown_inputs(observation: Observation) -> tuple[str, str] | None:
    """The input the page analysed, as its own input boxes show it: (text, sentence B)."""
    run = observation.run
    if observation.page == PADDING_LAB or run is None:
        return None
    if observation.page == "next_sentence":
        return run.text_value("a") or "", (run.text_value("b") or "").strip()
    text = run.text_value("text") or ""
    return text, "" if observation.page in ("fill_mask", "senses") else (run.text_value("b") or "").strip()


def close(shown: np.ndarray, expected: np.ndarray, tolerance: float = TOLERANCE) -> bool:
    return shown.shape == expected.shape and bool(np.allclose(shown, expected, atol=tolerance, rtol=1e-3))


def truncation_problem(run: Run, ref: Reference, out: dict[str, Any]) -> list[str]:
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


def explained(run: Run, reason: str, shown: list[str]) -> list[str]:
    """A part the model lacks: the page must say ``reason`` and show none of its numbers (``shown``: what it did)."""
    said = any(reason in alert.body for alert in run.drawn("alert"))
    return ([] if said else [f"no reason shown: {reason[:60]}…"]) + [f"shown without the part: {s}" for s in shown]


def check_anatomy(run: Run, ref: Reference, text: str, text_b: str) -> list[str]:
    out = ref.encode(text, text_b)
    table = run.table("embedding_norms")
    if (reason := bert_like_embeddings(ref.description)) is not None:  # RoBERTa: one token type, no BERT-like sum
        return explained(run, reason, [] if table is None else ["the embedding table"])
    if table is None:
        return ["no embedding table"]
    tokens = ref.tokenizer.convert_ids_to_tokens(out["ids"])
    problems = [] if table["token"].tolist() == tokens else [f"tokens: {len(table)} shown, {len(tokens)} expected"]
    return problems + truncation_problem(run, ref, out)


def check_fill_mask(run: Run, ref: Reference, text: str, text_b: str) -> list[str]:
    if ref.mask not in text:
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
    if not ref.has_nsp:  # RoBERTa's family: the page says why there is no IsNext, and shows no number
        return explained(run, ref.description.why_missing("NSP") or "", list(run.metrics()))
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
    sentences = [item.sentence for item in PRESETS["field"].sentences]  # the page's default preset lists these
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


def model_inputs(observation: Observation, shown: tuple[str, str], ref: Reference) -> list[tuple[str, str]]:
    """The model inputs a page's default view runs the model on (for the floor: Σ bare forwards)."""
    text, text_b = shown
    run = observation.run
    assert run is not None, "only a run that drew its page is checked"
    if observation.page in ("anatomy", "attention"):
        return [(text, text_b)]
    if observation.page == "fill_mask":
        return [(text, "")] if ref.mask in text else []
    if observation.page == "next_sentence" and not ref.has_nsp:  # the page explains why, and runs nothing
        return []
    if observation.page == "next_sentence":  # the verdict, then the ranking of each candidate B, then the pairs
        candidates = [line.strip() for line in (run.text_value("candidates") or "").splitlines() if line.strip()]
        pairs = run.widget("pairs")
        rows = []
        if pairs is not None:
            rows = [(a, b) for a, b, _ in dataframe(pairs).itertuples(index=False)]
        return [(text, text_b), *((text, c) for c in candidates), *rows]
    if observation.page == "senses":
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


def check_all(
    observations: list[Observation], ref: Reference, deadline: float
) -> tuple[list[Verdict], set[tuple[str, str]]]:
    """Check every run against the reference, grouped by input (one reference forward each); also
    collect the distinct model inputs. Runs left when ``deadline`` passes are marked unchecked."""
    verdicts: list[Verdict] = []
    inputs: set[tuple[str, str]] = set()
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
                    assert shown is not None  # a page's run (not the Padding lab's) shows its inputs
                    text, text_b = shown
                    if observation.typed is not None and text != observation.typed:
                        wrong.append("the page shows another input than the one typed")
                    wrong += CHECKS[observation.page](observation.run, ref, text, text_b)
                    capped = ref.encode(text, text_b)["full_length"] > ref.cap
                    inputs.update(model_inputs(observation, shown, ref))
            verdicts.append(Verdict(observation.page, observation.kind, observation.seconds, error, wrong, capped))
            observation.run = None  # free the drawn elements
        ref.forget(keep=[(s, "") for s in ref_sense_sentences()])
    return verdicts, inputs


def ref_sense_sentences() -> list[str]:
    return [item.sentence for item in PRESETS["field"].sentences]
