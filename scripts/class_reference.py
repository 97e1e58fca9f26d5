"""The expected results of a class's runs: transformers directly, in the checking process.

Its own tokenizer and model instances (the family's pre-training class: ``BertForPreTraining``, ``RobertaForMaskedLM``
…, run through ``bertlens.family``'s uniform calls), loaded from the server's model folder, truncating to the same
cap; the checkpoint's description (``describe_checkpoint``) says which heads it has and how long an input may be; and the
floor of serving each distinct model input, a bare forward pass (``encoder_of(bundle.model)(input_ids)``), timed on the
app's own loaded model.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch
from transformers import AutoConfig, AutoTokenizer, PreTrainedModel

from bertlens.family import describe_checkpoint, encoder_of, family_spec, mlm_logits, sentence_logits
from bertlens.models import ModelBundle, model_class


class Reference:
    """The expected results, from this process's own tokenizer and model (same folder, same cap)."""

    def __init__(self, folder: str, cap: int | None):
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        config = AutoConfig.from_pretrained(folder)
        spec = family_spec(config)
        assert spec is not None, f"{folder} is not a model of BERT's family"
        # output_loading_info: (model, info), which transformers' annotation does not say
        loaded: tuple[PreTrainedModel, dict[str, Any]] = model_class(spec, config).from_pretrained(  # type: ignore[assignment]
            folder, attn_implementation="eager", output_loading_info=True
        )
        model, info = loaded
        self.model = model.eval()  # type: ignore[no-untyped-call]  # transformers' PreTrainedModel.eval is unannotated
        self.description = describe_checkpoint(self.model, self.tokenizer, set(info["missing_keys"]))
        positions = self.description.max_positions
        self.cap = min(cap, positions) if cap else positions
        self._outputs: dict[tuple[str, str], dict[str, Any]] = {}
        self._bare_times: dict[tuple[str, str], BarePassTimes] = {}

    def encode(self, text: str, text_b: str = "") -> dict[str, Any]:
        enc = self.tokenizer(text, text_b or None, truncation=True, max_length=self.cap, return_offsets_mapping=True)
        full = len(self.tokenizer(text, text_b or None)["input_ids"])
        return {"ids": enc["input_ids"], "types": enc.get("token_type_ids"), "offsets": enc["offset_mapping"],
                "word_ids": enc.word_ids(), "full_length": full}  # fmt: skip

    def outputs(self, text: str, text_b: str = "") -> dict[str, Any]:
        """Tokens and one forward pass (attentions, hidden states, MLM probabilities, P(IsNext) or None without an
        NSP head); kept until ``forget``."""
        key = (text, text_b)
        if key not in self._outputs:
            enc = self.encode(text, text_b)
            types = {"token_type_ids": torch.tensor([enc["types"]])} if self.description.token_types else {}
            masks = [i for i, t in enumerate(enc["ids"]) if t == self.tokenizer.mask_token_id]
            with torch.inference_mode():
                out = encoder_of(self.model)(input_ids=torch.tensor([enc["ids"]]), **types,
                                             output_attentions=True, output_hidden_states=True)  # fmt: skip
                mlm = mlm_logits(self.model, out.last_hidden_state[0, masks])
                nsp = sentence_logits(self.model, out.pooler_output) if self.has_nsp else None
            enc.update(
                tokens=self.tokenizer.convert_ids_to_tokens(enc["ids"]),
                attentions=[a[0].numpy() for a in out.attentions],
                hidden=torch.stack(out.hidden_states)[:, 0].numpy(),
                mlm=torch.softmax(mlm, dim=-1).numpy(),
                p_is_next=None if nsp is None else float(torch.softmax(nsp[0], dim=-1)[0]),
            )
            self._outputs[key] = enc
        return self._outputs[key]

    @property
    def has_nsp(self) -> bool:
        """Whether the checkpoint predicts IsNext (BERT's NSP head, with its pooler); RoBERTa never had it."""
        return self.description.has("NSP") and self.description.pooler

    @property
    def mask(self) -> str:
        """The model's own mask token: "[MASK]", "<mask>" …"""
        return self.description.mask_token

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

    def bare_forward(
        self, bundle: ModelBundle, text: str, text_b: str = "", threads: int | None = None
    ) -> tuple[float, float]:
        """A ``encoder_of(bundle.model)(input_ids)`` call on the capped input (the floor of serving it), with torch on
        ``threads`` threads (None: as set): (wall seconds, CPU seconds of all this process's threads) of the faster
        of two, so that a moment of other load on the machine does not inflate the floor."""
        input_ids = torch.tensor([self.encode(text, text_b)["ids"]])
        times = []
        with torch.inference_mode(), threads_set_to(threads) if threads else nullcontext():
            for _ in range(2):
                started, cpu = time.perf_counter(), time.process_time()
                encoder_of(bundle.model)(input_ids)
                times.append((time.perf_counter() - started, time.process_time() - cpu))
        return min(times)

    def bare_pass_times(self, bundle: ModelBundle, inputs: Iterable[tuple[str, str]]) -> BarePassTimes:
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
