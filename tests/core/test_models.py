import socket
import time

import httpx2
import pytest
import torch
from safetensors.torch import load_file
from transformers import GPT2Config

from bertlens import models
from bertlens.models import (
    BUNDLED_MODEL,
    DEFAULT_MODEL,
    ModelUnavailable,
    NotBertError,
    initial_model_choice,
    load_model,
    load_with_fallback,
    needs_download,
)
from bertlens.settings import load_settings
from bertlens.synthetic import TINY_CONFIG, random_bert_config, save_random_bert


def test_model_choice_order():
    assert initial_model_choice({}) == DEFAULT_MODEL
    assert initial_model_choice({"BERTLENS_MODEL": "  "}) == DEFAULT_MODEL
    assert initial_model_choice({"BERTLENS_MODEL": "/models/mine"}) == "/models/mine"
    # The environment's model comes first in the picker, then the standard choices.
    options = load_settings({"BERTLENS_MODEL": "/models/mine"}).model_options
    assert options[0] == "/models/mine" and DEFAULT_MODEL in options and BUNDLED_MODEL in options
    assert load_settings({}).model_options[0] == DEFAULT_MODEL


def test_bundled_encoder_has_no_heads(bundled):
    caps = bundled.capabilities
    assert (caps.has_mlm_head, caps.has_nsp_head) == (False, False)
    assert (caps.num_layers, caps.num_heads, caps.hidden_size, caps.max_positions) == (6, 12, 384, 512)
    assert caps.cased is False
    assert not bundled.model.training
    assert not any(p.requires_grad for p in bundled.model.parameters())
    assert bundled.model.config._attn_implementation == "eager"


def test_tiny_pretraining_model_has_both_heads(tiny_bundle):
    caps = tiny_bundle.capabilities
    assert (caps.has_mlm_head, caps.has_nsp_head, caps.has_pooler) == (True, True, True)
    assert (caps.num_layers, caps.num_heads, caps.hidden_size) == (2, 4, 32)


def test_bare_encoder_checkpoint_reports_no_heads(tiny_encoder_dir):
    caps = load_model(str(tiny_encoder_dir)).capabilities
    assert (caps.has_mlm_head, caps.has_nsp_head) == (False, False)


def test_unreachable_model_falls_back_fast(monkeypatch, bundled):
    monkeypatch.delenv("HF_HUB_OFFLINE")
    # A closed local port stands in for an unreachable Hub: the probe must give up at once.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    started = time.perf_counter()
    bundle = load_with_fallback("no-such-org/no-such-bert", load=lambda name: bundled)
    assert time.perf_counter() - started < 5  # the user must know within seconds, not transformers' ~50 s
    assert bundle.name == BUNDLED_MODEL and bundle.requested == "no-such-org/no-such-bert"
    assert bundle.offline and "cannot be reached" in bundle.fallback_reason


def test_fallback_shares_the_loaded_encoder(bundled):
    bundle = load_with_fallback("no-such-org/no-such-bert", load=lambda name: bundled)
    assert bundle.model is bundled.model and bundle.is_fallback


def test_missing_folder_is_reported_as_such():
    with pytest.raises(ModelUnavailable, match="no model folder"):
        load_model("/no/such/folder")


@pytest.mark.parametrize("name", ["x" * 256, "/" + "y" * 300, "a/" + "b" * 400])
def test_a_name_too_long_for_the_file_system_is_unavailable_not_a_crash(name):
    """Path.is_dir raises OSError (ENAMETOOLONG) for such a name: it is simply no folder (and no cached id)."""
    assert not needs_download(name)
    with pytest.raises(ModelUnavailable):
        load_model(name)


def test_non_bert_checkpoint_is_refused(tmp_path):
    GPT2Config(n_layer=1, n_embd=8, n_head=2).save_pretrained(tmp_path)
    with pytest.raises(NotBertError, match="gpt2"):
        load_model(str(tmp_path))
    assert load_with_fallback(str(tmp_path), load=lambda name: load_model(BUNDLED_MODEL)).fallback_reason


def test_load_counts_each_load(tiny_pretraining_dir):
    before = models.LOAD_COUNTS[str(tiny_pretraining_dir)]
    load_model(str(tiny_pretraining_dir))
    assert models.LOAD_COUNTS[str(tiny_pretraining_dir)] == before + 1


def test_needs_download_only_for_uncached_hub_ids(tiny_pretraining_dir, tmp_path):
    assert models.needs_download("bert-base-uncased", cache_dir=str(tmp_path))  # an empty cache
    snapshot = tmp_path / "models--bert-base-uncased" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "models--bert-base-uncased" / "refs").mkdir()
    (tmp_path / "models--bert-base-uncased" / "refs" / "main").write_text("abc")
    assert not models.needs_download("bert-base-uncased", cache_dir=str(tmp_path))
    assert not models.needs_download(BUNDLED_MODEL)
    assert not models.needs_download(str(tiny_pretraining_dir))
    assert not models.needs_download("/no/such/folder")


def test_checkpoint_without_weights_is_unavailable_not_a_crash(tmp_path, bundled):
    random_bert_config(**TINY_CONFIG).save_pretrained(tmp_path)  # a config, no weights, no vocabulary
    with pytest.raises(ModelUnavailable, match="could not be loaded"):
        load_model(str(tmp_path))
    assert load_with_fallback(str(tmp_path), load=lambda name: bundled).is_fallback


def test_every_hub_request_gets_finite_waits_and_none_past_the_deadline():
    no_timeout = dict.fromkeys(("connect", "read", "write", "pool"))
    request = httpx2.Request("GET", "http://127.0.0.1/api/models/x", extensions={"timeout": no_timeout})
    models._cap_hub_timeouts(request)  # model_info passes timeout=None: it would wait forever
    assert set(request.extensions["timeout"].values()) == {models.HUB_REQUEST_TIMEOUT_SECONDS}
    with models.hub_deadline(2.0):
        models._cap_hub_timeouts(request)
        assert max(request.extensions["timeout"].values()) <= 2.0
    with models.hub_deadline(0.0), pytest.raises(models.HubTooSlow):
        models._cap_hub_timeouts(request)


# bert-base-uncased's config.json on the Hub (the fields a BertConfig has), as published.
BERT_BASE_UNCASED_PUBLISHED = {
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512,
    "model_type": "bert",
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "pad_token_id": 0,
    "type_vocab_size": 2,
    "vocab_size": 30522,
}


def test_the_benchmarks_random_bert_has_bert_base_uncaseds_configuration():
    config = random_bert_config().to_dict()
    assert {key: config[key] for key in BERT_BASE_UNCASED_PUBLISHED} == BERT_BASE_UNCASED_PUBLISHED
    assert random_bert_config(**TINY_CONFIG).to_dict()["hidden_size"] == 32


def test_a_random_bert_is_reproducible_from_its_seed(tmp_path):
    """The tests' models are the same on every run (a seed gives the same weights; another seed, others)."""
    config = random_bert_config(**TINY_CONFIG)
    saved = {
        name: load_file(save_random_bert(tmp_path / name, config, seed=seed) / "model.safetensors")
        for name, seed in (("first", 0), ("again", 0), ("other", 1))
    }
    assert saved["first"].keys() == saved["again"].keys()
    assert all(torch.equal(saved["first"][k], saved["again"][k]) for k in saved["first"])
    weight = "bert.embeddings.word_embeddings.weight"
    assert not torch.equal(saved["first"][weight], saved["other"][weight])
