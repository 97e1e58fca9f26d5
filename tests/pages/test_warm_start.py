"""Warm start: after a model's presets are computed in the background, every page's first view is a
cache hit (no forward pass), because the warm-up calls the pages' own cached functions."""

from __future__ import annotations

import streamlit as st

from bertlens.analysis import analysis_cache, model_engine
from bertlens.models import BUNDLED_MODEL
from bertlens.senses import sentence_vector_cache
from components.services import warm_start
from components.services.live import CachedLive
from components.services.models import cached_bundle
from tests.conftest import PAGE_FILES


def test_every_page_opens_on_warm_caches(tiny_pretraining_dir, open_page):
    model = str(tiny_pretraining_dir)
    st.cache_data.clear()
    analysis_cache(cached_bundle(model)).clear()
    sentence_vector_cache(cached_bundle(model)).clear()  # word senses also remember sentences per model
    engine = model_engine(cached_bundle(model))
    before = engine.executions
    assert warm_start.warm(model) == len(warm_start.preset_requests(model))
    assert engine.executions - before >= 10  # the caches were cold: the presets really ran
    for page in PAGE_FILES:
        before = engine.executions
        extra = {"text": "The capital of France is [MASK]."} if page.endswith("fill_mask.py") else {}
        at = open_page(page, model, **extra)
        assert not at.exception, page
        assert engine.executions == before, f"{page} ran the model although its presets were warm"


def test_warm_up_runs_only_in_a_real_server(tiny_pretraining_dir):
    assert warm_start.warm_up(str(tiny_pretraining_dir)) is None  # tests are not a server


def test_what_the_warm_start_leaves_is_frozen_out_of_the_collectors_walk(tiny_pretraining_dir, monkeypatch):
    calls = []
    monkeypatch.setattr(warm_start, "freeze_long_lived_objects", lambda: calls.append(1))
    warm_start.warm(str(tiny_pretraining_dir))
    assert calls == [1]  # after the presets (and every module they import) are in place


def test_every_lesson_question_is_answered_from_warm_caches(tiny_pretraining_dir, open_page):
    """A class follows a lesson link together: each step's sentences and each question's answer are warmed."""
    model = str(tiny_pretraining_dir)
    st.cache_data.clear()
    analysis_cache(cached_bundle(model)).clear()
    sentence_vector_cache(cached_bundle(model)).clear()
    engine = model_engine(cached_bundle(model))
    warm_start.warm(model)
    before = engine.executions
    at = open_page("pages/home.py", model)  # a script run, for the caches' context
    assert not at.exception
    live = CachedLive(cached_bundle(model))
    for step in warm_start.lesson_steps():
        if step.question:
            step.question.reveal(live)
        if "text" in step.params:
            live.analysis(str(step.params["text"]), str(step.params.get("b", "")))
    assert engine.executions == before, "a lesson ran the model although the warm start had run"


def test_a_fallback_warms_the_model_actually_loaded(open_page, monkeypatch, tmp_path):
    """Pages key every result by the model loaded (``bundle.name``); offline, the warm start keyed its presets
    by the model asked for, so not one of them was ever a cache hit (README review)."""
    warmed = []
    monkeypatch.setattr(warm_start, "warm_up", warmed.append)
    at = open_page("pages/tokenizer.py", tmp_path / "no-such-model")
    assert not at.exception
    assert warmed == [BUNDLED_MODEL]


def test_a_successor_warms_without_errors_for_the_parts_its_family_lacks(family_dir, caplog):
    """Random weights. RoBERTa has no BERT-like embedding sum (its page gives the reason): warming it logs no
    failed preset, and its other presets still run."""
    model = str(family_dir("roberta"))
    with caplog.at_level("INFO", logger="bertlens"):
        done = warm_start.warm(model)
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    assert 0 < done < len(warm_start.preset_requests(model))  # the embeddings preset was skipped, not counted
