"""Shared fixtures. Nothing here touches the network: models are tiny random BERTs saved to a
temporary folder (over the real bert-base-uncased vocabulary) or the bundled MiniLM encoder."""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # belt and braces: no test may reach the Hub
os.environ.pop("BERTLENS_HOSTED", None)

import streamlit.components.v2.manifest_scanner as component_manifests  # noqa: E402
from streamlit import config as st_config  # noqa: E402
from streamlit.runtime.scriptrunner.script_cache import ScriptCache  # noqa: E402
from streamlit.runtime.scriptrunner.script_runner import ScriptRunnerEvent  # noqa: E402
from streamlit.testing.v1 import (  # noqa: E402
    AppTest,  # noqa: E402
    app_test,
    local_script_runner,
)
from streamlit.testing.v1.element_tree import Dataframe, Html  # noqa: E402
from transformers import BertForMaskedLM, BertForNextSentencePrediction  # noqa: E402

from bertlens.models import BUNDLED_MODEL, ModelBundle, load_model  # noqa: E402
from bertlens.synthetic import (  # noqa: E402
    TINY_CONFIG,
    random_bert_config,
    save_random_bert,
    save_random_family_model,
)
from components.ui import exports  # noqa: E402
from components.ui.html_table import is_table, read_table  # noqa: E402
from components.ui.plotly_chart import ELEMENT, FIGURE_FIRST  # noqa: E402

# Each new AppTest scans every installed package's metadata for Streamlit components (~0.45 s here, ~45 % of a page
# test's time in py-spy); the installed packages do not change during a test run, so they are scanned once.
_scan_once = functools.cache(component_manifests.scan_component_manifests)
component_manifests.scan_component_manifests = lambda max_workers=None: list(_scan_once())


class _CompiledOnce(ScriptCache):
    """Each AppTest run compiles its scripts afresh (a new ``ScriptCache``: ~9 % of a page test's time in py-spy);
    here a script is compiled once per version of its file."""

    compiled: ClassVar[dict[tuple[str, int, bool], Any]] = {}

    def get_bytecode(self, script_path: str) -> Any:
        path = os.path.abspath(script_path)
        version = (path, os.stat(path).st_mtime_ns, bool(st_config.get_option("runner.magicEnabled")))
        if version not in self.compiled:
            self.compiled[version] = super().get_bytecode(path)
        return self.compiled[version]


app_test.ScriptCache = local_script_runner.ScriptCache = _CompiledOnce  # type: ignore[misc]


def _wait_for_the_run(runner: local_script_runner.LocalScriptRunner, timeout: float = 3) -> None:
    """AppTest's wait for a run to end, looking every 10 ms at the events since its last look (Streamlit's looks every
    1 ms at all of the run's events: ~5 % of a page test's time in py-spy, taken from the run it waits for)."""
    deadline, seen = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        time.sleep(0.01)
        new = runner.events[seen:]
        if ScriptRunnerEvent.SHUTDOWN in new:
            return
        seen += len(new)
    runner.request_stop()
    runner.join()
    raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")


local_script_runner.require_widgets_deltas = _wait_for_the_run

ROOT = Path(__file__).resolve().parents[1]
PAGE_FILES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
APPTEST_TIMEOUT = 120


@pytest.fixture(scope="session")
def tiny_pretraining_dir(tmp_path_factory) -> Path:
    """A tiny BertForPreTraining checkpoint with both heads (MLM and NSP)."""
    return save_random_bert(tmp_path_factory.mktemp("tiny-pretraining"), random_bert_config(**TINY_CONFIG))


@pytest.fixture(scope="session")
def tiny_encoder_dir(tmp_path_factory) -> Path:
    """A tiny bare BertModel checkpoint: no heads at all."""
    return save_random_bert(
        tmp_path_factory.mktemp("tiny-encoder"), random_bert_config(**TINY_CONFIG), with_heads=False
    )


@pytest.fixture(scope="session")
def family_dir(tmp_path_factory) -> Callable[[str], Path]:
    """A tiny random model of one of BERT's family (its pre-training class, every head; ``bertlens.synthetic``),
    saved once per session: ``family_dir("roberta")``."""
    saved: dict[str, Path] = {}

    def folder(family: str) -> Path:
        if family not in saved:
            saved[family] = save_random_family_model(tmp_path_factory.mktemp(f"tiny-{family}"), family)
        return saved[family]

    return folder


@pytest.fixture(scope="session")
def tiny_bundle(tiny_pretraining_dir) -> ModelBundle:
    return load_model(str(tiny_pretraining_dir))


@pytest.fixture(scope="session")
def bundled() -> ModelBundle:
    return load_model(BUNDLED_MODEL)


@pytest.fixture(scope="session")
def masked_lm(tiny_pretraining_dir) -> BertForMaskedLM:
    """The tiny pre-training checkpoint as BertForMaskedLM (the reference for fill-mask): the cls.predictions weights map across."""
    model, info = BertForMaskedLM.from_pretrained(tiny_pretraining_dir, output_loading_info=True)
    assert info["missing_keys"] == set() and info["mismatched_keys"] == set()
    return model.eval()


@pytest.fixture(scope="session")
def nsp_model(tiny_pretraining_dir) -> BertForNextSentencePrediction:
    """The tiny pre-training checkpoint as BertForNextSentencePrediction (the reference for the NSP head)."""
    model, info = BertForNextSentencePrediction.from_pretrained(tiny_pretraining_dir, output_loading_info=True)
    assert info["missing_keys"] == set()
    return model.eval()


@pytest.fixture
def open_page(monkeypatch) -> Callable[..., AppTest]:
    """Run a page file on its own, as a shared link would: ``open_page(path, model, **url_params)``."""

    def run(path: str, model: str | Path = BUNDLED_MODEL, **params: str) -> AppTest:
        monkeypatch.chdir(ROOT)
        monkeypatch.setenv("BERTLENS_MODEL", str(model))
        at = AppTest.from_file(str(ROOT / path), default_timeout=APPTEST_TIMEOUT)
        at.query_params.update(params)
        return at.run()

    return run


def assert_shows(text: str, template: str, *values: float, places: int, percent: bool = False) -> None:
    """Assert that ``text`` shows ``template`` with each ``{}`` a number of ``places`` decimals that rounds one of
    ``values`` (a percentage of it with ``percent``). A reference computed another way (in float64, summed in
    another order, on another CPU's kernels) can sit on the other side of a rounding boundary from the page's own
    value: 5.64475 is shown 5.6447 and formatted 5.6448. So each number shown may differ from its reference by
    half a unit of its last place, plus float noise; a wrong number (another layer, another token) differs more."""
    parts = template.split("{}")
    assert len(parts) - 1 == len(values), f"{template!r} has {len(parts) - 1} numbers, not {len(values)}"
    digits = rf"\d[\d,]*\.\d{{{places}}}" if places else r"\d[\d,]*"
    number = rf"(?<![\d.,])([+\-−]?{digits})(?![\d])"  # the whole number shown, not a part of a longer one
    pattern = number.join(re.escape(part) for part in parts)
    scale = 100 if percent else 1
    slack = 0.5 * 10.0**-places
    for match in re.finditer(pattern, text):
        shown = [float(group.replace("−", "-").replace(",", "")) for group in match.groups()]
        if all(
            abs(s - scale * v) <= slack + 1e-6 * max(1.0, abs(scale * v)) for s, v in zip(shown, values, strict=True)
        ):
            return
    raise AssertionError(f"{template!r} with {values} to {places} places is not shown in {text!r}")


def rounded(value: float, places: int) -> re.Pattern[str]:
    """``value`` as a page shows it to ``places`` decimals, either way where float noise puts it on a rounding
    boundary (as ``assert_shows`` allows): for Playwright's ``to_have_text``, which waits for it."""
    noise = 1e-6 * max(1.0, abs(value))
    shown = sorted({re.escape(f"{v:.{places}f}") for v in (value - noise, value + noise)})
    return re.compile(f"^({'|'.join(shown)})$")


def renderings(value: float, show: Callable[[float], str]) -> set[str]:
    """How ``show`` (a page's format: ``percent``, ``f"{v:.3g}"``) writes ``value`` and its float-noise neighbours:
    for significant-figure formats, which ``assert_shows`` does not read, where a reference computed another way
    can round apart from the page's own value on a boundary."""
    return {show(value * (1 + noise)) for noise in (-1e-5, 0.0, 1e-5)}


@dataclass(frozen=True)
class DrawnChart:
    """A chart drawn by ``components.ui.plotly_chart``, as AppTest sees it (AppTest knows no custom element)."""

    id: str  # the element's id: it ends in the chart's key
    spec: str  # the figure's plotly JSON, as sent to the browser
    payload: bytes  # everything sent: the figure, its plotly config and its name

    @property
    def sent(self) -> dict:
        return json.loads(self.payload)


def drawn_charts(node) -> list[DrawnChart]:
    """The charts drawn in ``node`` (an AppTest, a tab, a column …), in page order."""
    drawn = []
    for element in node.get("bidi_component"):
        if element.proto.component_name == ELEMENT:
            payload = element.proto.bytes
            text = payload.decode()
            _, end = json.JSONDecoder().raw_decode(text, len(FIGURE_FIRST))
            drawn.append(DrawnChart(element.proto.id, text[len(FIGURE_FIRST) : end], payload))
    return drawn


def chart_title(spec: dict) -> str:
    """A drawn chart's title as one line: long titles come in lines fitted to a phone (``exports.fit_title``)."""
    return spec["layout"]["title"]["text"].replace("<br>", " ")


def popover(at, label: str):
    """The popover block labelled ``label`` (AppTest has no accessor for popovers)."""

    def blocks(node):
        for child in getattr(node, "children", {}).values():
            yield child
            yield from blocks(child)

    [found] = [b for b in blocks(at.main) if b.type == "popover" and b.proto.popover.label == label]
    return found


def tables(at) -> list:
    """Every table drawn, in page order, as pandas DataFrames: the light HTML tables (their exact numbers,
    ``components.ui.html_table``) and the interactive grids (``st.dataframe``, ``st.data_editor``)."""
    return [
        e.value if isinstance(e, Dataframe) else read_table(e.value)
        for e in at
        if isinstance(e, Dataframe) or (isinstance(e, Html) and is_table(e.value))
    ]


@pytest.fixture
def csv_downloads(monkeypatch) -> Iterator[dict]:
    """Every CSV the pages offer from now on, by file name, as the table the button would download (a table
    built on click is built here)."""
    offered: dict = {}

    def record(df, filename, label="Download CSV", key=None) -> None:
        offered[filename] = df() if callable(df) else df

    # exports and every module that took its csv_download by name (modules imported later get ``record``).
    original = exports.csv_download
    for module in [m for name, m in sys.modules.items() if name.startswith("components.")]:
        if getattr(module, "csv_download", None) is original:
            monkeypatch.setattr(module, "csv_download", record)
    yield offered
    # A module first imported during this test took ``record`` by name, out of monkeypatch's reach: give it back
    # the real one (else a later test's fixture passed it over, and its downloads went to this test's dict).
    for module in [m for name, m in sys.modules.items() if name.startswith("components.")]:
        if getattr(module, "csv_download", None) is record:
            module.csv_download = original  # type: ignore[attr-defined]
