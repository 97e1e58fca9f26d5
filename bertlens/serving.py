"""Serving hygiene for a long-running server shared by a class."""

from __future__ import annotations

import gc
import os

GC_FREEZE_ENV = "BERTLENS_GC_FREEZE"  # "0" turns freezing off (e.g. to measure what it saves)
# OpenMP's idle threads sleep instead of spinning; set before torch loads (OpenMP reads it once, then).
THREAD_ENVIRONMENT = {"OMP_WAIT_POLICY": "PASSIVE"}


def prepare_threads() -> None:
    """Let torch's idle OpenMP threads sleep between operations instead of spinning on a core.

    A class server runs Streamlit's Python work (figures, serialisation) on the same cores as each
    forward pass. Spinning OpenMP workers take the core that work needs, the work holds the
    interpreter lock longer, and the pass waits for it between operations. Measured (2 cores, a
    256-token bert-base analysis pass beside three busy threads): 1.22 s → 0.78 s; alone ~5 % slower
    (see README "Server options for a class"). Call it before anything imports torch; an operator's
    own ``OMP_WAIT_POLICY`` wins.
    """
    for name, value in THREAD_ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def freeze_long_lived_objects() -> int:
    """Move every object alive now (torch, transformers, a loaded model) out of the garbage collector's reach.

    Streamlit runs a full ``gc.collect(2)`` after every script run (``runner.postScriptGC``); without
    this it walks the hundreds of thousands of objects of torch, transformers and each loaded model
    on every click. Called after each model load and after its warm start (every view module imported,
    the presets cached): what is alive then lives as long as the server.
    Garbage is collected first, so nothing unreachable is kept. Returns how many objects are frozen.
    """
    if os.environ.get(GC_FREEZE_ENV, "").strip() == "0":
        return gc.get_freeze_count()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
