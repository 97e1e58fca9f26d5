"""Every page file opens on its own (as a shared link does) without an exception."""

import pytest
from streamlit.testing.v1 import AppTest

from bertlens.models import BUNDLED_MODEL
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
