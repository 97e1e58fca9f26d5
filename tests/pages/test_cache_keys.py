"""The one cache layer: the token cap is part of every key, and one model's results are cleared in one call."""

from __future__ import annotations

import inspect

import numpy as np
import streamlit as st
import torch

from components.services import cache
from tests.conftest import tables
from tests.pages.test_anatomy_positions import chart
from tests.pages.test_attention_page import typed

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


def test_a_new_true_word_is_followed_through_the_layers(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm):
    """Fill-mask's Layer by layer tab: type paris, then london. The true word's rank and probability after every
    layer must follow london; a cache keyed without the word kept showing paris."""
    text = "The capital of France is [MASK]."
    st.cache_data.clear()
    at = open_page("pages/fill_mask.py", tiny_pretraining_dir, text=text, true_word="paris", fill_tab="Layer by layer")
    assert not at.exception, at.exception
    assert "rank of paris" in next(d for d in tables(at) if "after" in d.columns).columns
    at.text_input(key="true_word").input("london").run()
    assert not at.exception, at.exception
    inputs = tiny_bundle.tokenizer(text, return_tensors="pt")
    mask = inputs["input_ids"][0].tolist().index(tiny_bundle.tokenizer.mask_token_id)
    with torch.no_grad():
        states = masked_lm(**inputs, output_hidden_states=True).hidden_states
        probabilities = torch.stack([masked_lm.cls.predictions(s[0, mask]) for s in states]).softmax(-1)
    london, paris = tiny_bundle.tokenizer.convert_tokens_to_ids(["london", "paris"])
    ranks = (1 + (probabilities > probabilities[:, [london]]).sum(-1)).tolist()
    paris_ranks = (1 + (probabilities > probabilities[:, [paris]]).sum(-1)).tolist()
    assert ranks != paris_ranks  # the two words can be told apart
    summary = next(d for d in tables(at) if "after" in d.columns)
    assert "rank of paris" not in summary.columns
    assert summary["rank of london"].tolist() == ranks
    np.testing.assert_allclose(summary["P(london)"], probabilities[:, london].numpy(), rtol=1e-4)
    true_line = chart(at, "layer_probabilities")["data"][-1]
    assert true_line["name"] == "london (true word)"
    np.testing.assert_allclose(typed(true_line["y"]), probabilities[:, london].numpy(), rtol=1e-4)
