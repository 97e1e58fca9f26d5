"""A lesson question's live answer through the shared caches: what the lesson panel shows and the warm start computes ahead."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from bertlens.analysis import Analysis
from bertlens.models import ModelBundle
from bertlens.senses import WordVectors
from components.services import cache
from components.services.models import second_bundle


@dataclass(frozen=True)
class CachedLive:
    """A question's model output through the shared caches: same input, same numbers for every student."""

    bundle: ModelBundle
    partner_name: str = ""  # the model set beside it (a comparison's second model); "": none offered

    def analysis(self, text: str, text_b: str = "") -> Analysis:
        return cache.cached_analysis(self.bundle.name, text, text_b)

    def word_vectors(self, word: str, sentences: tuple[str, ...], references: tuple[str, ...]) -> WordVectors:
        return cache.word_vectors(cache.query(self.bundle.name), word, sentences, references)

    def mask_effect(self, lines: tuple[str, ...], max_length: int) -> pd.DataFrame:
        return cache.mask_distances(cache.query(self.bundle.name), lines, "max_length", max_length, True)

    def parameter_counts(self) -> pd.DataFrame:
        return cache.architecture(cache.query(self.bundle.name))[1]

    def padding_comparison(self, lines: tuple[str, ...], max_length: int) -> pd.DataFrame:
        return cache.padding_lab(cache.query(self.bundle.name), lines, max_length, True)[1]

    def partner(self) -> CachedLive | str:
        if not self.partner_name:
            return "this server offers no other model."
        found = second_bundle(self.partner_name)
        return found if isinstance(found, str) else CachedLive(found)
