"""Peak memory of one load and analysis, each kind in a fresh process: ``scripts/benchmark.py``'s memory rows.

    python -m scripts.benchmark_memory lens /path/to/model     # prints that process's peak RSS in bytes (Linux)

A fresh process's peak RSS counts what it imported as well as what it did, so this module imports no more than
the "imports" row names as its baseline: Python, torch, transformers (and Streamlit, through its logger, as the
benchmark's own process has it), BERT Lens's analysis and model loading. Not the pages' modules, which
``scripts/benchmark.py`` imports (about 100 MiB more). The benchmark's inputs live here too, for the same reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

# Before transformers and the Hub client load (they read these once): the model is a local folder.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.pop("BERTLENS_HOSTED", None)
warnings.filterwarnings("ignore")

import streamlit.logger  # noqa: E402
import torch  # noqa: E402
from transformers import (  # noqa: E402
    AutoTokenizer,
    BertForMaskedLM,
    BertForNextSentencePrediction,
    BertModel,
    PreTrainedTokenizerBase,
)
from transformers.utils import logging as transformers_logging  # noqa: E402

streamlit.logger.set_log_level("error")  # "no runtime" notes: the cached functions run bare in the benchmark
transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # unannotated in transformers

from bertlens.analysis import analyze, encode  # noqa: E402
from bertlens.models import load_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("imports", "lens-load", "lens", "seeds")
WORDS = "the students read a short story about a quiet village near the river and then wrote".split()
GIB = 2**30


def sentence_of(tokenizer: PreTrainedTokenizerBase, tokens: int) -> str:
    """A sentence of exactly ``tokens`` tokens ([CLS] and [SEP] included) with one [MASK]."""
    words = [WORDS[i % len(WORDS)] for i in range(tokens - 4)]
    words.insert(len(words) // 2, "[MASK]")
    text = " ".join(words) + "."
    assert len(encode(tokenizer, text).input_ids) == tokens, tokens
    return text


def memory_child(kind: str, folder: str) -> None:
    """Load and run one forward pass at 512 tokens the BERT Lens way or the seeds' way; print peak RSS (Linux)."""
    if kind == "imports":
        pass
    elif kind == "lens-load":
        load_model(folder)
    elif kind == "lens":
        bundle = load_model(folder)
        analyze(bundle, sentence_of(bundle.tokenizer, 512))
    elif kind == "seeds":  # the notebooks: three separate models, each with its own copy of the encoder
        tokenizer = AutoTokenizer.from_pretrained(folder)
        text = sentence_of(tokenizer, 512)
        inputs = tokenizer(text, return_tensors="pt")
        # transformers' PreTrainedModel.eval is unannotated
        models = [cls.from_pretrained(folder, attn_implementation="eager").eval()  # type: ignore[no-untyped-call]
                  for cls in (BertModel, BertForMaskedLM, BertForNextSentencePrediction)]  # fmt: skip
        with torch.inference_mode():
            models[0](**inputs, output_attentions=True, output_hidden_states=True)
            models[1](**inputs)
            models[2](**inputs)
    # VmHWM, not ru_maxrss: a child forked from a big parent inherits the parent's ru_maxrss.
    status = Path("/proc/self/status").read_text()
    print(int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) * 1024)


def peak_rss(kind: str, folder: str) -> int:
    """``memory_child(kind, folder)`` in a process of its own (this module, run from the repository root)."""
    out = subprocess.run([sys.executable, "-m", "scripts.benchmark_memory", kind, folder], cwd=ROOT,
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "TRANSFORMERS_VERBOSITY": "error"})  # fmt: skip
    return int(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in KINDS:
        sys.exit(f"usage: python -m scripts.benchmark_memory {{{','.join(KINDS)}}} MODEL_FOLDER")
    memory_child(sys.argv[1], sys.argv[2])


if __name__ == "__main__":
    main()
