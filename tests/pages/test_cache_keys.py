"""The one cache layer: the token cap is part of every key, and one model's results are cleared in one call."""

from __future__ import annotations

import inspect

import streamlit as st

from components import cache
from tests.conftest import tables

LONG = " ".join(f"word{i}" for i in range(40))


def test_every_cached_computation_is_keyed_by_the_query():
    cached = [f for f in vars(cache).values() if type(f).__name__ == "CachedFunc" and f is not cache.cached_bundle]
    assert len(cached) >= 20  # the forward pass and every derived result, all here
    for function in cached:
        first = next(iter(inspect.signature(function).parameters.values()))
        assert first.annotation in ("Query", cache.Query), function


def test_a_new_token_cap_is_never_served_stale_results(open_page, monkeypatch, tiny_pretraining_dir):
    """Embeddings (and every other derived result) were once keyed without the cap: a cap set between two
    runs returned the uncapped result. Now the cap is in the query that keys them."""
    st.cache_data.clear()
    at = open_page("pages/anatomy.py", tiny_pretraining_dir, anatomy_tab="Embeddings", text=LONG)
    uncapped = [len(d) for d in tables(at)]
    assert at.slider(key="pos").max > 8
    monkeypatch.setenv("BERTLENS_MAX_TOKENS", "8")
    at = open_page("pages/anatomy.py", tiny_pretraining_dir, anatomy_tab="Embeddings", text=LONG)
    assert not at.exception
    assert at.slider(key="pos").max == 7  # the input is capped at 8 tokens …
    assert max(len(d) for d in tables(at)) < max(uncapped)  # … and so are its cached embeddings


def test_forget_model_drops_only_that_models_results(tiny_pretraining_dir, bundled, monkeypatch):
    computed: list[int] = []
    statistics = cache.head_statistics
    monkeypatch.setattr(cache, "head_statistics", lambda *a: computed.append(1) or statistics(*a))
    model, text = str(tiny_pretraining_dir), "Forget me, said the cat."
    st.cache_data.clear()
    for name in (model, bundled.name):
        cache.statistics(cache.query(name, text))
    assert len(computed) == 2
    cache.forget_model(model)  # one call
    for name in (model, bundled.name):
        cache.statistics(cache.query(name, text))
    assert len(computed) == 3  # the forgotten model's result was computed again; the other one was kept
