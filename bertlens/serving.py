"""Serving hygiene for a long-running server shared by a class."""

from __future__ import annotations

import gc
import os

GC_FREEZE_ENV = "BERTLENS_GC_FREEZE"  # "0" turns freezing off (e.g. to measure what it saves)


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
