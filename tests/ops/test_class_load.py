"""A small class on one shared link (scripts/class_load.py): 8 sessions x 3 inputs across every page,
and one session in the Tokenizer page's Padding lab (max_length 8, truncation on) the whole time,
against a real server in hosted mode (token cap 256) on the tiny pre-training model.

Every run's numbers are checked against a single-user reference computed in the test process with
transformers directly: token ids, tokens, the attention heatmap, fill-mask probabilities, P(IsNext),
word-sense cosines, the padding lab's ids. The Padding lab sets truncation to 8 tokens on the
tokenizer while other sessions tokenize; any of it leaking into another session's result (a token
list cut to 8, a small heatmap) is a wrong result here.
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("websockets")
import torch  # noqa: E402
from transformers import RobertaForMaskedLM  # noqa: E402

from scripts.class_load import DEFAULT_CAP, Options, run_class  # noqa: E402
from scripts.class_reference import Reference  # noqa: E402
from scripts.class_report import markdown  # noqa: E402
from scripts.class_sim import input_text  # noqa: E402


def test_class_gets_right_results_one_model_load_and_the_cap(tiny_pretraining_dir, tmp_path):
    threads = torch.get_num_threads()
    summary = run_class(
        str(tiny_pretraining_dir), Options(sessions=8, inputs=3, max_seconds=110), tmp_path / "server.log"
    )
    print("\n" + markdown(summary))  # pytest -s shows the table
    assert summary.finished_in_time
    assert summary.token_cap == DEFAULT_CAP
    assert summary.padding_lab_runs > 0  # the Padding lab really ran alongside
    assert summary.errors == 0, summary.examples
    assert summary.wrong == 0, summary.examples
    assert summary.model_loads == 1
    # The server's CPU time over the burst is its own (no more than its cores allow in that time), and it bounds
    # the efficiency: no server serves faster than the work it did on these cores.
    assert summary.server_cpu_seconds is not None and summary.bare_forward_cpu_seconds
    assert 0 < summary.server_cpu_seconds <= summary.burst_seconds * summary.cores * 1.05
    assert "| highest all-cores efficiency that much server work allows" in markdown(summary)
    # Both floors were timed (torch on one thread, then back on all of them): the efficiency and the stricter.
    assert summary.bare_forward_one_core_seconds > 0 and torch.get_num_threads() == threads
    # Told apart by their lives: most of a tiny model's class is script runs, in threads that came and went.
    loop, passes, scripts = summary.server_cpu_by_thread.values()
    assert scripts > max(loop, passes)
    # Inputs of 300 and 512 tokens were cut to the cap (checked: the token ids and the notice).
    assert summary.capped_runs > 0


def test_reference_and_inputs_follow_the_family(family_dir):
    """RoBERTa (tiny, random): texts carry its <mask>, the cap is its positions past the padding id, and the
    reference's guesses are RobertaForMaskedLM's own; no NSP head, so no P(IsNext) to check."""
    folder = family_dir("roberta")
    ref = Reference(str(folder), DEFAULT_CAP)
    text = input_text(ref.tokenizer, 0, 0, 48, random.Random(0))
    assert ref.mask == "<mask>" in text and len(ref.tokenizer(text)["input_ids"]) == 48
    assert ref.cap == ref.model.config.max_position_embeddings - 2 and not ref.has_nsp
    out = ref.outputs(text)
    assert out["p_is_next"] is None
    model = RobertaForMaskedLM.from_pretrained(folder).eval()
    with torch.inference_mode():
        logits = model(torch.tensor([out["ids"]])).logits[0]
    mask = out["ids"].index(ref.tokenizer.mask_token_id)
    assert torch.allclose(torch.softmax(logits[mask], -1), torch.from_numpy(out["mlm"][0]), atol=1e-6)
