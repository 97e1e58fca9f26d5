"""Hosted mode (public links): an allowlist of models, no custom field, capped inputs.

Settings come from the environment or from a ``[bertlens]`` table in Streamlit secrets.
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from streamlit import config as streamlit_config
from streamlit.runtime.secrets import Secrets
from streamlit.testing.v1 import AppTest

from bertlens.models import BUNDLED_MODEL, DEFAULT_MODEL, FAMILY_MODELS, LOAD_COUNTS, MODEL_CHOICES
from bertlens.settings import (
    DEFAULT_CLASS_STORE,
    OFF_WORDS,
    ON_WORDS,
    SettingsError,
    env_from_secrets,
    load_settings,
    merged_environment,
    secrets_table,
    unknown_variables,
)
from bertlens.synthetic import TINY_CONFIG, random_bert_config, save_random_bert
from components.services import models as model
from components.services.protocol import FAILURE
from components.services.settings import _secret_settings, name_unknown_variables
from components.services.text import literal
from components.state.model_choice import CUSTOM
from tests.conftest import APPTEST_TIMEOUT, ROOT, tables

# --- settings (pure) ---------------------------------------------------------------------------


def test_not_hosted_by_default():
    config = load_settings({})
    assert not config.hosted and config.allow_custom_models
    assert config.budgets.tokens is None
    assert config.model_options == MODEL_CHOICES


@pytest.mark.parametrize("word", ["1", "true", "TRUE", " yes ", "on", "On"])
def test_hosted_switch_words(word):
    assert load_settings({"BERTLENS_HOSTED": word}).hosted


@pytest.mark.parametrize("word", ["0", "false", "No", "off", "", "  "])
def test_not_hosted_words(word):
    assert not load_settings({"BERTLENS_HOSTED": word}).hosted


def test_accepted_spellings():
    assert ON_WORDS == ("1", "on", "true", "yes") and OFF_WORDS == ("0", "false", "no", "off")


@pytest.mark.parametrize("word", ["enabled", "y", "maybe", "hosted", "2", "yes please"])
def test_unknown_hosted_spellings_fail_closed(word):
    """They used to switch hosted mode off silently: a public server without caps."""
    with pytest.raises(SettingsError) as raised:
        load_settings({"BERTLENS_HOSTED": word})
    assert "BERTLENS_HOSTED" in str(raised.value)
    assert "1, on, true, yes (on) or 0, false, no, off (off)" in str(raised.value)


def test_blank_environment_variable_does_not_override_secrets():
    env = merged_environment({"BERTLENS_HOSTED": "", "BERTLENS_MAX_TOKENS": " "}, {"hosted": True, "max_tokens": 64})
    config = load_settings(env)
    assert config.hosted and config.budgets.tokens == 64
    assert not load_settings(merged_environment({"BERTLENS_HOSTED": "0"}, {"hosted": True})).hosted  # set: env wins


def test_unknown_secrets_key_fails_closed():
    with pytest.raises(
        SettingsError,
        match="Unknown key 'hostd'.*Known keys: hosted, model, allowed_models, class_store, trust_forwarded_for, max_tokens",
    ):
        env_from_secrets({"hostd": True})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BERTLENS_MAX_CONCURRENT_PASSES", "0"),
        ("BERTLENS_MAX_CONCURRENT_PASSES", "two"),
        ("BERTLENS_MAX_CONCURRENT_PASSES", "1.5"),
        ("BERTLENS_REQUEST_SECONDS", "ninety"),
        ("BERTLENS_REQUEST_SECONDS", "-5"),
        ("BERTLENS_REQUEST_SECONDS", "inf"),
        ("BERTLENS_MAX_CONCURRENT_PASSES", "1_0"),
        ("BERTLENS_MAX_CONCURRENT_PASSES", "٣"),
        ("BERTLENS_REQUEST_SECONDS", "1e3"),
        ("BERTLENS_GC_FREEZE", "off"),
    ],
)
def test_server_variables_fail_closed(name, value):
    """They fell back to their defaults in silence: a typo in the time budget meant 90 s (README review)."""
    with pytest.raises(SettingsError, match=f"{name} is '{value}'. Accepted: "):
        load_settings({name: value})


def test_server_variables_are_read_from_the_environment_only():
    config = load_settings(
        {"BERTLENS_MAX_CONCURRENT_PASSES": "2", "BERTLENS_REQUEST_SECONDS": "30", "BERTLENS_GC_FREEZE": "0"}
    )
    assert config.budgets.tokens is None  # read, and nothing else changed
    with pytest.raises(SettingsError, match="BERTLENS_REQUEST_SECONDS is read from the environment only"):
        env_from_secrets({"request_seconds": 30})


def test_hosted_defaults_offer_default_and_bundled_only_with_caps():
    config = load_settings({"BERTLENS_HOSTED": "1"})
    assert config.model_options == (DEFAULT_MODEL, BUNDLED_MODEL)
    assert not config.allow_custom_models
    assert config.budgets.tokens == 256 and config.budgets.sentences == 50


def test_hosted_allowlist_and_caps_from_env():
    config = load_settings(
        {
            "BERTLENS_HOSTED": "1",
            "BERTLENS_MODEL": BUNDLED_MODEL,
            "BERTLENS_ALLOWED_MODELS": " bert-base-cased , ,bert-base-uncased,bert-base-cased",
            "BERTLENS_MAX_TOKENS": "64",
            "BERTLENS_MAX_SENTENCES": "12",
        }
    )
    assert config.model_options == (BUNDLED_MODEL, "bert-base-cased", "bert-base-uncased")
    assert (config.budgets.tokens, config.budgets.sentences) == (64, 12)


def test_the_hosted_allowlist_names_any_checkpoint_of_berts_family():
    family = ("roberta-base", "answerdotai/ModernBERT-base", "google/electra-base-discriminator", "albert-base-v2")
    config = load_settings({"BERTLENS_HOSTED": "1", "BERTLENS_ALLOWED_MODELS": ",".join(family)})
    assert config.model_options == (DEFAULT_MODEL, *family) and not config.allow_custom_models
    assert set(FAMILY_MODELS) <= set(load_settings({}).model_options)  # offered by the local picker


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "1e3", "12.5", "+3", "٣", "１２"])  # Arabic-Indic, full-width
@pytest.mark.parametrize("hosted", ["1", "0"])
def test_malformed_caps_fail_closed(raw, hosted):
    with pytest.raises(SettingsError, match="BERTLENS_MAX_TOKENS .* Accepted: a whole number ≥ 1"):
        load_settings({"BERTLENS_HOSTED": hosted, "BERTLENS_MAX_TOKENS": raw})


def test_unknown_variables_are_named_with_the_one_meant():
    env = {"BERTLENS_MAX_TOKEN": "64", "BERTLENS_HOSTD": "1", "BERTLENS_COLOUR": "red", "BERTLENS_HOSTED": "1"}
    env |= {"BERTLENS_SNAPSHOT_DIR": "/tmp", "BERTLENS_REQUEST_SECONDS": "5", "HOME": "/root"}
    assert unknown_variables(env) == [
        "BERTLENS_COLOUR",
        "BERTLENS_HOSTD (did you mean BERTLENS_HOSTED?)",
        "BERTLENS_MAX_TOKEN (did you mean BERTLENS_MAX_TOKENS?)",
    ]


def test_the_server_log_names_unknown_variables_once(monkeypatch, caplog):
    monkeypatch.setenv("BERTLENS_MAX_TOKEN", "64")
    name_unknown_variables.cache_clear()
    with caplog.at_level("WARNING", logger="bertlens"):
        name_unknown_variables()
        name_unknown_variables()
    assert caplog.text.count("Unknown settings, not read: BERTLENS_MAX_TOKEN (did you mean BERTLENS_MAX_TOKENS?)") == 1
    name_unknown_variables.cache_clear()


def test_caps_accept_whole_numbers():
    assert load_settings({"BERTLENS_HOSTED": "1", "BERTLENS_MAX_TOKENS": " 128 "}).budgets.tokens == 128


@pytest.mark.parametrize(
    "secrets, error",
    [
        ({"BertLens": {"hosted": True}}, "[BertLens] table: BERT Lens reads [bertlens]"),
        ({" BERTLENS": {"hosted": True}}, "BERT Lens reads [bertlens]"),
        ({"bertlens": "hosted"}, "bertlens in the secrets is a value, not a table"),
    ],
)
def test_a_misspelt_or_flat_secrets_table_fails_closed(secrets, error):
    """Read as no table, ``[BertLens] hosted = true`` served a public server in local mode."""
    with pytest.raises(SettingsError, match=re.escape(error)):
        secrets_table(secrets)
    assert secrets_table({"other_app": {"key": 1}}) == {} and secrets_table({"bertlens": {"hosted": 1}}) == {
        "hosted": 1
    }


@pytest.fixture
def secrets_file(monkeypatch, tmp_path):
    """Streamlit's secrets read from one file (``write`` it, or not), as a server reads them."""
    path = tmp_path / "secrets.toml"
    monkeypatch.setattr(model.st, "secrets", Secrets())
    option = streamlit_config.get_option
    monkeypatch.setattr(
        streamlit_config, "get_option", lambda key: [str(path)] if key == "secrets.files" else option(key)
    )
    return path


def test_secrets_that_cannot_be_read_fail_closed(secrets_file):
    """Streamlit raises a TOML error in secrets.toml as a FileNotFoundError: it was read as no secrets, and a hosted
    server configured there served in local mode (no token cap, any model, 20,000 characters)."""
    assert _secret_settings() == {}  # no file: nothing to read
    secrets_file.write_text("[bertlens]\nhosted = true\nteacher = Andrés\n")  # not TOML: a bare string
    with pytest.raises(SettingsError, match="Streamlit's secrets cannot be read"):
        _secret_settings()


@pytest.mark.parametrize("unreadable", ["latin-1", "no permission"])
def test_secrets_not_in_utf8_or_not_to_be_opened_fail_closed(secrets_file, monkeypatch, unreadable):
    """A secrets.toml saved in Latin-1 ("Andrés" on Windows) raised UnicodeDecodeError, one the server cannot open
    PermissionError: not a SettingsError, so visitors saw a traceback naming the file."""
    if unreadable == "latin-1":
        secrets_file.write_bytes('[bertlens]\nhosted = true\nteacher = "Andrés"\n'.encode("latin-1"))
    else:  # as root the test process could still open a file without permissions: the error is made
        secrets_file.write_text("[bertlens]\nhosted = true\n")
        real_open = open

        def refused(file, *args, **kwargs):
            if str(file) == str(secrets_file):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr("builtins.open", refused)
    with pytest.raises(SettingsError, match="Streamlit's secrets cannot be read"):
        _secret_settings()


def test_readable_secrets_file_is_read(secrets_file):
    secrets_file.write_text("[bertlens]\nhosted = true\nmax_tokens = 128\n")
    assert load_settings(merged_environment({}, _secret_settings())).budgets.tokens == 128


def test_secrets_table_becomes_environment_variables():
    table = {
        "hosted": True,
        "allowed_models": ["bert-base-uncased", BUNDLED_MODEL],
        "max_tokens": 128,
        "BERTLENS_MAX_SENTENCES": 20,
        "model": BUNDLED_MODEL,
    }
    assert env_from_secrets(table) == {
        "BERTLENS_HOSTED": "1",
        "BERTLENS_ALLOWED_MODELS": f"bert-base-uncased,{BUNDLED_MODEL}",
        "BERTLENS_MAX_TOKENS": "128",
        "BERTLENS_MAX_SENTENCES": "20",
        "BERTLENS_MODEL": BUNDLED_MODEL,
    }
    config = load_settings(env_from_secrets(table))
    assert config.hosted and config.budgets.tokens == 128 and config.budgets.sentences == 20
    assert env_from_secrets({"hosted": False}) == {"BERTLENS_HOSTED": "0"}


# --- the app in hosted mode --------------------------------------------------------------------


@pytest.fixture
def hosted_app(monkeypatch):
    """``hosted_app(path, secrets=None, **url_params)``: run a file in hosted mode (env, or secrets only)."""

    def run(path: str = "app.py", secrets: dict | None = None, **params: str) -> AppTest:
        monkeypatch.chdir(ROOT)
        monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
        if secrets is None:
            monkeypatch.setenv("BERTLENS_HOSTED", "1")
            monkeypatch.setenv("BERTLENS_ALLOWED_MODELS", BUNDLED_MODEL)
        at = AppTest.from_file(str(ROOT / path), default_timeout=APPTEST_TIMEOUT)
        if secrets is not None:
            at.secrets["bertlens"] = secrets
        at.query_params.update(params)
        return at.run()

    return run


def warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


def test_a_hosted_page_that_fails_shows_a_message_and_logs_the_traceback(hosted_app, monkeypatch, caplog):
    """Hosted, a page's error showed its traceback and the server's file paths to every visitor; now a message,
    and the traceback in the server's log. Locally the traceback stays on the page (a teacher debugging)."""

    def broken() -> None:
        raise RuntimeError("/srv/bertlens/components/home.py: something broke")

    monkeypatch.setattr("components.views.home.cards.page_cards", broken)
    with caplog.at_level("ERROR", logger="bertlens"):
        at = hosted_app()
    assert not at.exception
    assert [e.value for e in at.error] == [FAILURE]
    assert "/srv/bertlens/components/home.py: something broke" in caplog.text
    monkeypatch.delenv("BERTLENS_HOSTED")
    local = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT).run()
    assert "something broke" in local.exception[0].message


def test_hosted_picker_has_no_custom_option(hosted_app):
    at = hosted_app()
    assert not at.exception
    picker = at.sidebar.selectbox(key="model")
    assert picker.options == [BUNDLED_MODEL]
    assert not at.sidebar.text_input  # no custom id field
    assert not [w for w in at.warning]


def test_not_hosted_picker_offers_custom(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT).run()
    assert CUSTOM in at.sidebar.selectbox(key="model").options


def test_blank_environment_variable_leaves_secrets_hosted_mode_on(hosted_app, monkeypatch):
    monkeypatch.setenv("BERTLENS_HOSTED", "")  # e.g. `ENV BERTLENS_HOSTED=` in a Dockerfile
    at = hosted_app(secrets={"hosted": True, "allowed_models": [BUNDLED_MODEL]})
    assert not at.exception
    assert at.sidebar.selectbox(key="model").options == [BUNDLED_MODEL]


@pytest.mark.parametrize("path", ["app.py", "pages/tokenizer.py"])
@pytest.mark.parametrize("setting, value", [("BERTLENS_HOSTED", "enabled"), ("BERTLENS_MAX_TOKENS", "lots")])
def test_malformed_setting_stops_the_app_with_an_error(monkeypatch, path, setting, value):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    monkeypatch.setenv(setting, value)
    at = AppTest.from_file(str(ROOT / path), default_timeout=APPTEST_TIMEOUT).run()
    assert not at.exception
    assert [e.value for e in at.error] and "settings cannot be read" in at.error[0].value
    assert literal(setting) in at.error[0].value and "Accepted" in at.error[0].value
    assert not at.sidebar.selectbox and not at.text_area and not tables(at)  # no page content, no model picker


def test_malformed_secrets_stop_the_app_with_an_error(hosted_app):
    at = hosted_app(secrets={"hosted": "y"})
    assert not at.exception
    assert "BERTLENS\\_HOSTED" in at.error[0].value and not at.sidebar.selectbox


def test_secrets_alone_turn_hosted_mode_on(hosted_app):
    at = hosted_app(secrets={"hosted": True, "allowed_models": [BUNDLED_MODEL]})
    assert not at.exception
    assert CUSTOM not in at.sidebar.selectbox(key="model").options
    assert at.sidebar.selectbox(key="model").options == [BUNDLED_MODEL]


@pytest.mark.parametrize("path", ["app.py", "pages/tokenizer.py"])
def test_off_list_model_in_the_link_is_refused(hosted_app, tmp_path, path):
    """A loadable folder named in the link is still refused: visitors choose from the allowlist only."""
    folder = str(save_random_bert(tmp_path, random_bert_config(**TINY_CONFIG)))  # never loaded before
    at = hosted_app(path, model=folder)
    assert not at.exception
    assert LOAD_COUNTS[folder] == 0  # never loaded
    assert "not one of the models this server offers" in warnings(at)
    assert f"Model: `{BUNDLED_MODEL}`" in " ".join(c.value for c in at.caption)


def test_off_list_hub_id_is_refused_without_a_download_attempt(hosted_app):
    at = hosted_app(model="someone/huge-model")
    assert not at.exception
    assert LOAD_COUNTS["someone/huge-model"] == 0
    assert "not one of the models this server offers" in warnings(at)
    assert "huge" in warnings(at)


def test_token_cap_applies(hosted_app, monkeypatch):
    monkeypatch.setenv("BERTLENS_MAX_TOKENS", "8")
    # A sentence no other test analyses (the forward pass is cached per model and text).
    text = "hosted token cap check: one two three four five six seven eight nine ten"
    at = hosted_app("pages/attention.py", text=text)
    assert not at.exception
    # The server's budget, named with the setting that changes it (it once read like the model's own limit)
    assert "the limit is at most 8 tokens per text on this server (set `BERTLENS_MAX_TOKENS`" in warnings(at)


def test_a_hosted_server_runs_an_allowed_family_model_within_its_budgets(monkeypatch, family_dir):
    """Random weights. A RoBERTa folder on the allowlist is loaded by the link naming it, and the hosted token cap
    cuts its input as it cuts BERT's."""
    folder = str(family_dir("roberta"))
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    monkeypatch.setenv("BERTLENS_HOSTED", "1")
    monkeypatch.setenv("BERTLENS_ALLOWED_MODELS", f"{BUNDLED_MODEL},{folder}")
    monkeypatch.setenv("BERTLENS_MAX_TOKENS", "8")
    at = AppTest.from_file(str(ROOT / "pages/attention.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params.update(model=folder, text="The quick cat reads a book in Paris with the old dog")
    at.run()
    assert not at.exception
    assert f"Model: `{folder}` — RoBERTa" in " ".join(c.value for c in at.caption)
    assert "the limit is at most 8 tokens per text on this server" in warnings(at)


def test_a_custom_model_travels_in_the_link(monkeypatch, tmp_path):
    """A link naming a custom folder opens a fresh session on that model (the address once carried only the
    menu's label, so students got the default; that the browser writes it: tests/browser/test_pages.py)."""
    monkeypatch.setattr(model, "_custom_loaded", set())  # the process's custom models: this test's own
    folder = str(save_random_bert(tmp_path, random_bert_config(**TINY_CONFIG)))
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    student = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    student.query_params.update(model=CUSTOM, custom_model=folder)
    student.run()
    assert not student.exception and not student.warning and active_model(student) == folder
    assert student.sidebar.text_input(key="custom_model").value == folder


def test_custom_models_are_loaded_within_their_budget(monkeypatch, tmp_path):
    """Each custom model stays loaded for the server's life: a link with a new name loaded one more, without end.
    Beyond the budget the default is used, and the page says which models the server holds and how to change it."""
    monkeypatch.setattr(model, "_custom_loaded", set())
    monkeypatch.setenv("BERTLENS_MAX_CUSTOM_MODELS", "1")
    first, second = (
        str(save_random_bert(tmp_path / n, random_bert_config(**TINY_CONFIG), seed=i)) for i, n in enumerate("ab")
    )
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)

    def open_with(folder: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / "pages/tokenizer.py"), default_timeout=APPTEST_TIMEOUT)
        at.query_params.update(model=CUSTOM, custom_model=folder)
        return at.run()

    assert f"Model: `{first}`" in " ".join(c.value for c in open_with(first).caption)
    refused = open_with(second)
    assert not refused.exception and LOAD_COUNTS[second] == 0  # never loaded
    warning = " ".join(w.value for w in refused.warning)
    assert (
        "is not loaded, and" in warning
        and "This server holds `" in warning
        and "`BERTLENS_MAX_CUSTOM_MODELS`" in warning
    )
    assert f"Model: `{BUNDLED_MODEL}`" in " ".join(c.value for c in refused.caption)
    assert not open_with(first).warning  # the one it holds is still there
    again = open_with(first + "/")  # the same folder spelt otherwise: the same model, not a second one
    assert not again.warning and f"Model: `{Path(first).resolve()}`" in " ".join(c.value for c in again.caption)


def test_a_custom_name_too_long_for_a_file_name_falls_back_with_the_reason(monkeypatch):
    """300 characters are a legal Hub-id box entry but no file name: asking the file system whether it is a
    folder raised (OSError: File name too long) on every page while the name stayed in the link."""
    monkeypatch.setattr(model, "_custom_loaded", set())
    monkeypatch.setattr(model, "_custom_failed", set())
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    at = AppTest.from_file(str(ROOT / "pages/tokenizer.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params.update(model=CUSTOM, custom_model="x" * 300)
    at.run()
    assert not at.exception
    assert "running on the bundled encoder" in " ".join(w.value for w in at.warning)  # a Hub id, offline here
    assert f"Model: `{BUNDLED_MODEL}`" in " ".join(c.value for c in at.caption)


def test_custom_models_chosen_at_once_stay_within_their_budget(monkeypatch):
    """Eight students choose eight new custom models at the same instant, with room for one: one is loaded, the
    others get the default (a check without a reservation let every one through until the first load ended)."""
    monkeypatch.setattr(model, "_custom_loaded", set())
    monkeypatch.setattr(model, "_custom_failed", set())
    monkeypatch.setenv("BERTLENS_MAX_CUSTOM_MODELS", "1")
    names = [f"someone/model-{i}" for i in range(8)]
    together = threading.Barrier(len(names))

    def choose(name: str) -> bool:
        together.wait()
        return model.claim_custom_slot(name)

    with ThreadPoolExecutor(len(names)) as pool:
        admitted = [name for name, ok in zip(names, pool.map(choose, names), strict=True) if ok]
    assert len(admitted) == 1 and model._custom_loaded == set(admitted)
    assert model.claim_custom_slot(admitted[0])  # the one admitted is still admitted
    assert not model.claim_custom_slot(next(n for n in names if n not in admitted))


def test_a_custom_model_that_fails_to_load_gives_its_slot_back(monkeypatch, tmp_path):
    """A custom name that falls back to the bundled encoder holds no model, so it takes no slot from the next."""
    monkeypatch.setattr(model, "_custom_loaded", set())
    monkeypatch.setattr(model, "_custom_failed", set())
    monkeypatch.setenv("BERTLENS_MAX_CUSTOM_MODELS", "1")
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    good = str(save_random_bert(tmp_path / "good", random_bert_config(**TINY_CONFIG)))

    def open_with(folder: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / "pages/tokenizer.py"), default_timeout=APPTEST_TIMEOUT)
        at.query_params.update(model=CUSTOM, custom_model=folder)
        return at.run()

    failed = open_with(str(not_a_model))
    assert not failed.exception and f"Model: `{BUNDLED_MODEL}`" in " ".join(c.value for c in failed.caption)
    assert "Could not load" in " ".join(w.value for w in failed.warning)
    assert model._custom_failed == {str(not_a_model.resolve())} and not model._custom_loaded
    loaded = open_with(good)
    assert not loaded.warning and f"Model: `{Path(good).resolve()}`" in " ".join(c.value for c in loaded.caption)
    again = open_with(str(not_a_model))  # the failed name, chosen again: its fallback with the reason, not the budget
    assert "Could not load" in " ".join(w.value for w in again.warning)
    assert "This server holds" not in " ".join(w.value for w in again.warning)


def active_model(at) -> str:
    return next(m.value for m in at.sidebar.markdown if m.value.startswith("**Active model:**")).split("`")[1]


@pytest.mark.parametrize(
    ("value", "url"),
    [
        (None, f"sqlite:///{DEFAULT_CLASS_STORE}"),
        ("  ", f"sqlite:///{DEFAULT_CLASS_STORE}"),
        ("/srv/bertlens/rooms.sqlite3", "sqlite:////srv/bertlens/rooms.sqlite3"),
        ("sqlite:////srv/bertlens/rooms.sqlite3", "sqlite:////srv/bertlens/rooms.sqlite3"),
        ("postgresql://bertlens:secret@db:5432/bertlens", "postgresql://bertlens:secret@db:5432/bertlens"),
        ("postgres://db/bertlens", "postgres://db/bertlens"),
    ],
)
def test_the_class_store_is_a_sqlite_file_or_a_postgresql_url(value, url):
    env = {} if value is None else {"BERTLENS_CLASS_STORE": value}
    assert load_settings(env).class_store == url
    if value is not None:  # the secrets table's key says the same
        assert load_settings(merged_environment({}, {"class_store": value})).class_store == url


@pytest.mark.parametrize(
    "value",
    ["rooms.sqlite3", "./rooms.sqlite3", "sqlite:///rooms.sqlite3", "sqlite:///", "/srv/", "mysql://db/rooms",
     "https://example.org/rooms", ":memory:", "sqlite:///:memory:"],
)  # fmt: skip
def test_any_other_class_store_fails_closed_naming_the_variable(value):
    """A relative path names another file in each working folder; another database is no store of ours."""
    with pytest.raises(SettingsError, match=r"BERTLENS_CLASS_STORE \(secrets key 'class_store'\).*postgresql://"):
        load_settings({"BERTLENS_CLASS_STORE": value})


@pytest.mark.parametrize("value", ["postgresql+psycopg://bertlens:s3cret@db/rooms", "postgress://u:s3cret@db/x"])
def test_a_refused_store_url_is_not_shown_with_its_password(value):
    """The message is shown on the page, to every student: a mistyped URL's credentials must not be in it."""
    with pytest.raises(SettingsError) as refused:
        load_settings({"BERTLENS_CLASS_STORE": value})
    assert "s3cret" not in str(refused.value) and value.split("://")[0] in str(refused.value)


def test_the_old_store_variable_is_no_setting():
    assert "BERTLENS_ROOMS" in unknown_variables({"BERTLENS_ROOMS": "/srv/rooms.sqlite3"})[0]


def test_a_proxys_forwarded_for_is_trusted_only_when_switched_on():
    assert not load_settings({}).trust_forwarded_for
    assert load_settings({"BERTLENS_TRUST_FORWARDED_FOR": "1"}).trust_forwarded_for
    assert load_settings(merged_environment({}, {"trust_forwarded_for": True})).trust_forwarded_for  # secrets' key
    with pytest.raises(SettingsError, match=r"BERTLENS_TRUST_FORWARDED_FOR \(secrets key 'trust_forwarded_for'\)"):
        load_settings({"BERTLENS_TRUST_FORWARDED_FOR": "maybe"})
