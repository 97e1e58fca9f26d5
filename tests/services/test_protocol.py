"""A hosted server against what any visitor can send through Streamlit's browser protocol (issue 47's attacks).

One hosted server (the shipped config, a tiny model with both heads) and ``scripts.streamlit_client`` sessions:
the same messages, cookies and links a browser tab or a script sends. Each attack failed before
``components/services/protocol.py``, ``answers.read_cookie`` and ``params.ignored_link``: a cache emptied for the whole
class, tracebacks, a session broken for good, a link ignored in silence.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from components.services.protocol import FAILURE
from components.state.answers import ANSWERS_COOKIE
from scripts.streamlit_client import Run, Session, run_to_end
from tests.live_server import model_loads, streamlit_server

pytest.importorskip("websockets")
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402

TIMEOUT = 120


@pytest.fixture(scope="module")
def hosted(tiny_pretraining_dir, tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A hosted server's URL and its log."""
    log = tmp_path_factory.mktemp("hosted") / "server.log"
    with streamlit_server(tiny_pretraining_dir, log, BERTLENS_HOSTED="1") as url:
        visit(url, "")  # the server's first run installs the guards (components.services.protocol.install)
        yield url, log


def alerts(run: Run) -> str:
    return " ".join(alert.body for alert in run.drawn("alert"))


def assert_clean(run: Run) -> None:
    """No traceback and no page failure: the run drew its page."""
    assert not run.exceptions, [e.message for e in run.exceptions]
    assert FAILURE not in alerts(run)


def visit(url: str, page: str, query: str = "", cookie: str = "", *reruns: dict) -> list[Run]:
    """Open ``page`` with ``query`` (and ``cookie``), then rerun it with each widget dict of ``reruns`` in turn."""

    async def tab() -> list[Run]:
        async with Session.connect(url, page, query, cookie=cookie) as session:
            runs = [await session.run(timeout=TIMEOUT)]
            for widgets in reruns:
                runs.append(await session.run(widgets, timeout=TIMEOUT))
            return runs

    return run_to_end(tab())


def test_a_visitors_clear_cache_clears_nothing_shared(hosted):
    url, log = hosted

    async def tab() -> list[Run]:
        async with Session.connect(url, "attention", "text=The+cat+sat.") as session:
            first = await session.run(timeout=TIMEOUT)
            loads.append(len(model_loads(log)))
            clear = BackMsg()
            clear.clear_cache = True
            for _ in range(3):
                await session.websocket.send(clear.SerializeToString())
            return [first, await session.run(timeout=TIMEOUT)]

    loads: list[int] = []
    for run in run_to_end(tab()):
        assert_clean(run)
    assert loads == [1] and len(model_loads(log)) == 1  # no reload: the shared model and results were kept
    assert log.read_text().count("Ignored a clear_cache message") >= 3


@pytest.mark.parametrize(
    ("page", "query"),
    [("", "lesson=discover&step=2"), ("tokenizer", "lesson=discover&step=1"), ("attention", "lesson=patterns&step=1")],
)
def test_a_malformed_answers_cookie_is_ignored(hosted, page, query):
    url, log = hosted
    for depth in (1_100, 2_999):  # unescaped "[" nested deeper than the JSON decoder's recursion limit
        (run,) = visit(url, page, query, f"{ANSWERS_COOKIE}={'[' * depth}")
        assert_clean(run)
    assert "Ignored an unreadable bertlens_answers cookie (RecursionError)" in log.read_text()


def test_forged_widget_states_of_the_wrong_kind_are_dropped_and_the_session_goes_on(hosted):
    """Every widget of Attention's first view (the sentence box, the view and mean pickers, the layer and head
    sliders, …) sent a value of another kind: a number, then text. The session keeps its sentence and its next
    runs work (a number for the sentence box raised TypeError on that run and every later one)."""
    url, log = hosted
    sentence = "The quick brown fox jumps."

    async def tab() -> tuple[list[Run], list[str]]:
        async with Session.connect(url, "attention", f"text={sentence.replace(' ', '+')}") as session:
            first = await session.run(timeout=TIMEOUT)
            widgets = [body.id for body in map(_body, first.elements) if getattr(body, "id", "").startswith("$$ID-")]
            runs = [first]
            for forged in (12345, "forged"):
                runs.append(await session.run(dict.fromkeys(widgets, forged), timeout=TIMEOUT))
            runs.append(await session.run(timeout=TIMEOUT))
            return runs, widgets

    runs, widgets = run_to_end(tab())
    assert any(w.endswith("-text") for w in widgets) and len(widgets) >= 5, widgets
    for run in runs:
        assert_clean(run)
    assert sentence in [box.value for box in runs[1].drawn("text_input")]  # the number was dropped, the text kept
    assert "forged" in [box.value for box in runs[-1].drawn("text_input")]  # text is the sentence box's kind
    assert "Ignored a widget state from the client" in log.read_text()


def _body(element):
    return getattr(element, element.WhichOneof("type"))


def test_a_link_over_streamlits_parameter_limit_is_named_and_rewritten(hosted):
    url, _ = hosted
    junk = "&".join(f"x{n}=1" for n in range(1_000))

    async def tab() -> tuple[Run, str]:
        async with Session.connect(url, "tokenizer", f"text=Hello+world.&{junk}") as session:
            run = await session.run(timeout=TIMEOUT)
            return run, session.query_string

    run, address = run_to_end(tab())
    assert_clean(run)
    assert "This link was ignored" in alerts(run) and "1,001 parameters" in alerts(run)
    assert "1,000" in alerts(run)
    assert "x0" not in dict(parse_qsl(address))  # the address is the view shown, not the ignored link


def test_a_link_within_the_limit_says_nothing(hosted):
    url, _ = hosted
    (run,) = visit(url, "tokenizer", "text=Hello+world.")
    assert_clean(run)
    assert "This link was ignored" not in alerts(run)
