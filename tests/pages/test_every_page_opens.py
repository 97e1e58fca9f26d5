"""Every page file opens on its own (as a shared link does) without an exception."""

import pytest
from streamlit.testing.v1 import AppTest

from bertlens.models import BUNDLED_MODEL
from components.state.model_choice import CUSTOM
from components.ui.model_picker import WHY
from tests.conftest import APPTEST_TIMEOUT, PAGE_FILES, ROOT, popover

SENTENCE = "The capital of France is [MASK]."


def shown(at) -> str:
    return " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.warning, *at.info, *at.title])


def test_all_six_pages_and_home_exist():
    names = {p.split("/")[-1] for p in PAGE_FILES}
    assert {
        "home.py",
        "tokenizer.py",
        "anatomy.py",
        "fill_mask.py",
        "next_sentence.py",
        "attention.py",
        "senses.py",
    } <= names


@pytest.mark.parametrize("path", PAGE_FILES)
def test_page_opens_on_bundled_encoder(open_page, path):
    at = open_page(path, BUNDLED_MODEL, text=SENTENCE)
    assert not at.exception, at.exception
    assert BUNDLED_MODEL in shown(at)


@pytest.mark.parametrize("path", PAGE_FILES)
def test_page_opens_on_tiny_pretraining_model(open_page, tiny_pretraining_dir, path):
    at = open_page(path, tiny_pretraining_dir, text=SENTENCE)
    assert not at.exception, at.exception
    assert "pre-training heads: MLM, NSP" in shown(at)


# Next sentence reads its own pair (URL ``a``/``b``); every other analysis page shows the shared sentence.
SHARED_TEXT_PAGES = [p for p in PAGE_FILES if not p.endswith(("home.py", "next_sentence.py"))]


@pytest.mark.parametrize("path", SHARED_TEXT_PAGES)
def test_page_shows_the_shared_sentence_from_the_link(open_page, path):
    at = open_page(path, BUNDLED_MODEL, text="Sinan loves a beautiful day")
    assert at.text_input(key="text").value == "Sinan loves a beautiful day"


def test_uncached_model_offline_shows_banner_and_runs(open_page):
    # An id no HF cache holds: offline (HF_HUB_OFFLINE=1) it must fall back, whatever this machine cached.
    at = open_page("pages/home.py", "no-such-org/no-such-bert")
    assert not at.exception
    [line] = [w.value for w in at.warning if "bundled encoder" in w.value]
    assert line.startswith("**Offline** — running on the bundled encoder") and "\n" not in line  # one line
    details = popover(at, WHY)
    fix = " ".join(m.value for m in details.markdown)
    assert "Why: " in fix and "hf download bert-base-uncased" in fix and "BERTLENS_MODEL=" in fix
    assert details.button(key="retry_model_load")  # Retry lives with the details
    assert f"Model: `{BUNDLED_MODEL}`" in shown(at)


def below_the_picker(at) -> list[str]:
    """What the sidebar shows under the model picker (and its custom model box), as text, in order; the load's
    status (a collapsed box, shown only on a model's first load in a process) left out."""
    after, found = [], False
    for element in at.sidebar:
        if getattr(element, "key", None) in ("model", "custom_model"):
            found = True
        elif found and element.type in ("warning", "markdown", "caption"):
            after.append(element.value)
    return after


def test_the_model_picker_says_what_runs_when_the_model_asked_for_could_not_be_loaded(monkeypatch):
    """Offline, the picker went on showing the model asked for as its value while the bundled encoder ran: only the
    page's banner said so. The line right under it now says so; the picker's value (the link's ``model``) is still
    the one asked for, and picking another model works as before."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", "no-such-org/no-such-bert")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT).run()
    assert not at.exception
    assert at.sidebar.selectbox(key="model").value == "no-such-org/no-such-bert"  # what the class link asks for
    said = below_the_picker(at)
    assert said[0] == f"**Not loaded:** `no-such-org/no-such-bert`. Running the bundled `{BUNDLED_MODEL}` instead."
    assert said[1] == f"**Active model:** `{BUNDLED_MODEL}`"
    at.sidebar.selectbox(key="model").set_value(BUNDLED_MODEL).run()
    assert not at.exception
    assert at.sidebar.selectbox(key="model").value == BUNDLED_MODEL
    assert not [line for line in below_the_picker(at) if "Not loaded" in line]


def test_the_model_picker_says_what_runs_when_a_custom_model_could_not_be_loaded(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params.update(model=CUSTOM, custom_model="no-such-org/another-bert")
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="model").value == CUSTOM
    assert at.sidebar.text_input(key="custom_model").value == "no-such-org/another-bert"
    assert below_the_picker(at)[0].startswith("**Not loaded:** `no-such-org/another-bert`. Running the bundled")


def test_app_navigation_keeps_the_sentence(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("BERTLENS_MODEL", BUNDLED_MODEL)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params["text"] = "Sinan loves a beautiful day"
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="model").value == BUNDLED_MODEL
    for path in SHARED_TEXT_PAGES:
        at.switch_page(path).run()
        assert not at.exception, (path, at.exception)
        assert at.text_input(key="text").value == "Sinan loves a beautiful day", path
