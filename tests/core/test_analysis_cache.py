"""The analyses every session shares: bounded in bytes (not entries), least recently used out first."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from bertlens.analysis import (
    ANALYSIS_CACHE_BYTES,
    analysis_cache,
    analyze,
    encode,
    forward_batch,
    model_engine,
    remembered_analysis,
)
from bertlens.lru import BytesLRU


def test_bytes_lru_keeps_the_most_recent_values_within_its_budget():
    cache: BytesLRU[bytes] = BytesLRU(10, len)
    cache.put("a", b"1234")
    cache.put("b", b"1234")
    assert cache.get("a") == b"1234"  # "a" is now the most recently used
    cache.put("c", b"1234")  # 12 bytes: the least recently used ("b") goes
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (b"1234", None, b"1234")
    assert cache.nbytes == 8 and len(cache) == 2
    cache.put("huge", b"x" * 11)  # larger than the whole budget: not kept, nothing evicted for it
    assert cache.get("huge") is None and len(cache) == 2


def test_an_analysis_counts_every_array_it_holds(tiny_bundle):
    result = analyze(tiny_bundle, "The capital of France is [MASK].")
    arrays = [getattr(result, f.name) for f in dataclasses.fields(result)]
    arrays = [a for a in arrays if isinstance(a, np.ndarray)]
    assert len(arrays) == 5  # attentions, hidden states, pooler, MLM and NSP logits: this model has them all
    assert result.nbytes == sum(a.nbytes for a in arrays) > 0


def test_a_batched_analysis_holds_its_own_rows_and_nothing_of_the_padded_batch(tiny_bundle):
    """What the cache counts is what it keeps: an array that viewed the padded batch would keep the whole batch alive."""
    short, long = (
        encode(tiny_bundle.tokenizer, text) for text in ("A [MASK] day.", "A much longer [MASK] sentence here.")
    )
    for result in forward_batch(tiny_bundle, [short, long]):
        arrays = (result.attentions, result.hidden_states, result.pooler_output, result.mlm_logits, result.nsp_logits)
        for array in arrays:
            assert array is not None and isinstance(array.base, torch.Tensor)  # a view of the tensor it came from
            assert array.base.untyped_storage().nbytes() == array.nbytes  # which holds this array and nothing else


def test_a_class_worth_of_inputs_stays_cached_where_eight_entries_did_not(tiny_bundle):
    """30 students' sentences: every one is still cached when its student switches page (a count of 8
    entries had dropped all but the last 8, and each page switch ran the model again)."""
    analysis_cache(tiny_bundle).clear()
    engine = model_engine(tiny_bundle)
    texts = [f"Student {n} wrote a sentence about the river." for n in range(30)]
    first = [remembered_analysis(tiny_bundle, text) for text in texts]
    before = engine.executions
    again = [remembered_analysis(tiny_bundle, text) for text in texts]
    assert engine.executions == before  # no forward pass: every one was remembered
    assert all(a is b for a, b in zip(first, again))
    assert len(analysis_cache(tiny_bundle)) == 30
    assert analysis_cache(tiny_bundle).nbytes <= ANALYSIS_CACHE_BYTES
    np.testing.assert_array_equal(again[0].attentions, analyze(tiny_bundle, texts[0]).attentions)


def test_the_cache_key_holds_the_token_cap(tiny_bundle):
    analysis_cache(tiny_bundle).clear()
    text = "one two three four five six seven eight nine ten"
    capped = remembered_analysis(tiny_bundle, text, token_cap=8)
    assert len(capped.encoding) == 8
    assert len(remembered_analysis(tiny_bundle, text).encoding) > 8  # not the capped result
    assert remembered_analysis(tiny_bundle, text, token_cap=8) is capped


def test_editing_sentence_b_gives_the_new_pairs_analysis(tiny_bundle, nsp_model):
    """After sentence B is edited, the verdict and tokens are the new pair's, not the old B's remembered ones."""
    analysis_cache(tiny_bundle).clear()
    tokenizer = tiny_bundle.tokenizer
    text, text_b = "I went to the store.", ("At the store, I bought fresh strawberries.", "Penguins cannot fly.")
    first = remembered_analysis(tiny_bundle, text, text_b[0])
    second = remembered_analysis(tiny_bundle, text, text_b[1])
    for b, result in zip(text_b, (first, second)):
        inputs = tokenizer(text, b, return_tensors="pt")
        assert result.encoding.input_ids == tuple(inputs["input_ids"][0].tolist())
        with torch.no_grad():
            reference = nsp_model(**inputs).logits[0].numpy()
        np.testing.assert_allclose(result.nsp_logits, reference, atol=1e-5)
    assert remembered_analysis(tiny_bundle, text, text_b[0]) is first  # each pair remembered on its own
    single = remembered_analysis(tiny_bundle, text)
    assert single.encoding.input_ids == tuple(tokenizer(text)["input_ids"])
