"""A class's results in Markdown: p50/p95 latency per page, errors, wrong results, model loads, peak server RSS
and serving efficiency (see ``BarePassTimes.facts`` in ``scripts/class_reference.py``)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from scripts.class_checks import Verdict
from scripts.class_sim import PAD_LENGTH, PADDING_LAB, PAGES

GIB = 2**30


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
    pages: dict[str, dict[str, float]] = field(default_factory=dict)  # page -> runs, p50/p95 seconds, errors, wrong
    examples: list[str] = field(default_factory=list)  # a few wrong results and errors, for reading


def summarise(verdicts: list[Verdict], **facts: Any) -> Summary:
    rows: dict[str, dict[str, float]] = {}
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


def families_table(summaries: dict[str, Summary]) -> str:
    """One row per model of one invocation (``--families``): the ratios to compare, measured on the same machine."""
    lines = ["| model | burst | worst page's p95 of a new input ÷ ideal | efficiency: one core each (all cores) "
             "| Σ bare forwards, one core each | peak RSS | errors / wrong |",
             "| --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for name, s in summaries.items():
        worst = max((row["p95_seconds"] for page, row in s.pages.items() if page in PAGES), default=float("nan"))
        rss = "n/a" if s.peak_rss_gib is None else f"{s.peak_rss_gib:.2f} GiB"
        lines.append(f"| {name} | {s.burst_seconds:.1f} s | {worst / s.ideal_p95_seconds:.2f} × | "
                     f"{s.serving_efficiency:.0%} ({s.serving_efficiency_all_cores:.0%}) | "
                     f"{s.bare_forward_one_core_seconds:.1f} s | {rss} | {s.errors} / {s.wrong} |")  # fmt: skip
    return "\n".join(lines)
