"""Streamlit's browser protocol, spoken from Python: one browser tab, minus the rendering.

A ``Session`` holds one websocket to ``/_stcore/stream`` (subprotocol ``streamlit``), asks for
reruns (``BackMsg.rerun_script``: the page, the URL's query string, changed widget values) and
collects the elements each run draws (``ForwardMsg`` deltas) until the run finishes. Many sessions
in one event loop run in the server at the same time, each in its own script thread — what a class
of browser tabs does. Helpers below read what was drawn: widgets by key, tables (Arrow), plotly
figures, metrics.

Used by tests/ops/test_concurrency.py, tests/ops/test_class_load.py and the class simulation (scripts/class_sim.py).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
from collections.abc import AsyncIterator, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode

import numpy as np
import pandas as pd
import pyarrow as pa
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from websockets.asyncio.client import ClientConnection
from websockets.typing import Subprotocol

from components.ui.html_table import is_table, read_table
from components.ui.plotly_chart import ELEMENT

FINISHED = ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY
FRAGMENT_FINISHED = ForwardMsg.ScriptFinishedStatus.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
RERUN = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN


class Click:
    """A button's press as a widget value (``trigger_value``: true for the one run it starts); ``CLICK``."""


CLICK = Click()
WidgetValue = str | bool | int | float | Click


T = TypeVar("T")


def run_to_end(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` in a thread of its own: works even where the caller's thread already runs an event
    loop (Playwright's sync API keeps one running for as long as a browser is open)."""
    with ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, coroutine).result()


class RunFailed(RuntimeError):
    """The script run ended other than successfully (e.g. a compile error)."""


@dataclass
class Run:
    """What one script run drew (the last run, when the page reran itself with ``st.rerun``)."""

    page: str
    elements: list[Element] = field(default_factory=list)
    reruns: int = 0  # st.rerun() calls the page made before this run

    # The element bodies are Streamlit's protobuf messages of many kinds (TextArea, Metric, BidiComponent, …): Any.
    def drawn(self, kind: str) -> list[Any]:
        """Every element of ``kind`` ("text_area", "dataframe", "bidi_component", "metric", "exception", …)."""
        return drawn(self.elements, kind)

    def charts(self) -> list[Any]:
        """The charts drawn (``components.ui.plotly_chart``: custom elements named ``ELEMENT``), in page order."""
        return [chart for chart in self.drawn("bidi_component") if chart.component_name == ELEMENT]

    def widget(self, key: str) -> Any:
        """The widget (or keyed dataframe/chart) created with ``key=key``, or None."""
        for body in map(element_body, self.elements):
            if key_of(getattr(body, "id", "")) == key:
                return body
        return None

    def table(self, key: str) -> pd.DataFrame | None:
        """The table shown by ``exports.table(..., key=key)`` (or with a CSV button keyed ``csv-{key}``):
        the table drawn just before that button (an HTML table or a grid), as a pandas DataFrame; None
        when not drawn."""
        last = None
        for element in self.elements:
            kind = element.WhichOneof("type")
            if kind == "dataframe":
                last = dataframe(element.dataframe)
            elif kind == "html" and is_table(element.html.body):
                last = read_table(element.html.body)
            elif kind == "download_button" and key_of(element.download_button.id) == f"csv-{key}":
                return last
        return None

    def text_value(self, key: str) -> str | None:
        """The value a text widget (``text_input``/``text_area`` with ``key=key``) shows, or None."""
        widget = self.widget(key)
        if widget is None:
            return None
        value: str = widget.value if widget.HasField("value") else widget.default
        return value

    def metrics(self) -> dict[str, str]:
        return {metric.label: metric.body for metric in self.drawn("metric")}

    @property
    def exceptions(self) -> list[Any]:
        return self.drawn("exception")


class Session:
    """One browser tab on one page of the app."""

    def __init__(self, websocket: ClientConnection, page: str, query_string: str = ""):
        self.websocket, self.page, self.query_string = websocket, page, query_string
        self.page_hash = ""
        self.page_hashes: dict[str, str] = {}  # url path -> page script hash (from the navigation message)
        self.bound: dict[str, str] = {}  # widget id -> the URL parameter it is bound to (bind="query-params")
        # ``st.fragment(run_every=…)``s of the last full run: fragment id -> seconds. A browser reruns each that often
        # (``BackMsg.rerun_script`` with the fragment's id, ``is_auto_rerun``) until the next full run.
        self.auto_reruns: dict[str, float] = {}
        # Widget id -> the st.fragment it was drawn in ("": none), so a click reruns only that fragment: the widgets
        # the page shows now (a full run's, as a fragment's later runs redrew them), not every one ever drawn.
        self.fragment_of: dict[str, str] = {}

    @classmethod
    @asynccontextmanager
    async def connect(cls, url: str, page: str, query_string: str = "", cookie: str = "") -> AsyncIterator[Session]:
        """Open a tab on ``url`` (http://host:port) showing ``page`` (its URL path, "" for the default page),
        sending ``cookie`` (a Cookie header's value) with the websocket handshake, as a browser sends its cookies."""
        address = url.replace("http://", "ws://").rstrip("/") + "/_stcore/stream"
        headers = {"Cookie": cookie} if cookie else None
        async with websockets.connect(
            address, subprotocols=[Subprotocol("streamlit")], max_size=None, additional_headers=headers
        ) as websocket:
            yield cls(websocket, page, query_string)

    async def open(self, page: str, query_string: str = "", timeout: float = 120) -> Run:
        """Switch to another page, as the sidebar navigation does (the old page's URL parameters are dropped)."""
        self.page, self.query_string = page, query_string
        self.page_hash = self.page_hashes.get(page, "")
        return await self.run(timeout=timeout)

    async def run(self, widgets: dict[str, WidgetValue] | None = None, timeout: float = 120, fragment: str = "") -> Run:
        """A rerun of the current page: the first load, or after setting widgets (widget id -> value; widgets drawn
        in an ``st.fragment`` rerun only it, as in a browser); with ``fragment`` (one of ``auto_reruns``), that
        fragment's timed rerun, as the browser sends it (its elements only, unless it reruns the whole page).

        ``timeout`` bounds the wait for each message from the server (``asyncio.TimeoutError``).
        """
        for widget_id, value in (widgets or {}).items():
            if isinstance(value, str) and widget_id in self.bound:  # a browser's frontend writes it to the URL
                self.query_string = with_param(self.query_string, self.bound[widget_id], value)
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query_string
        state.page_name, state.page_script_hash = self.page, self.page_hash
        timed = bool(fragment)
        if widgets and not fragment and len(owners := {self.fragment_of.get(widget) for widget in widgets}) == 1:
            fragment = owners.pop() or ""
        state.fragment_id, state.is_auto_rerun = fragment, timed
        if widgets:
            states = WidgetStates()
            for widget_id, value in widgets.items():
                set_widget_value(states.widgets.add(), widget_id, value)
            state.widget_states.CopyFrom(states)
        await self.websocket.send(message.SerializeToString())
        run = Run(self.page)
        full = not fragment  # a fragment's run starts with a new_session message too, and keeps the fragments
        widgets_drawn: dict[str, str] = {}  # by this run: widget id -> its fragment
        while True:
            reply = ForwardMsg()
            reply.ParseFromString(await asyncio.wait_for(self.websocket.recv(), timeout))
            kind = reply.WhichOneof("type")
            if kind == "new_session" and full:  # a full run starts: its fragments replace the last one's
                self.auto_reruns = {}
            elif kind == "auto_rerun":
                self.auto_reruns[reply.auto_rerun.fragment_id] = reply.auto_rerun.interval
            elif kind == "stop_auto_rerun":
                for stopped in reply.stop_auto_rerun.fragment_ids:
                    self.auto_reruns.pop(stopped, None)
            elif kind == "navigation":  # the page actually run (new_session names app.py's hash)
                self.page_hash = reply.navigation.page_script_hash
                self.page_hashes = {p.url_pathname: p.page_script_hash for p in reply.navigation.app_pages}
            elif kind == "page_info_changed":  # the page wrote the URL: a browser sends it back next time
                self.query_string = reply.page_info_changed.query_string
            elif kind == "delta" and reply.delta.WhichOneof("type") == "new_element":
                run.elements.append(reply.delta.new_element)
                if widget_id := getattr(element_body(reply.delta.new_element), "id", ""):
                    widgets_drawn[widget_id] = reply.delta.fragment_id
            elif kind == "script_finished":
                if reply.script_finished == RERUN:  # the page called st.rerun(): its next run follows
                    run, full, widgets_drawn = Run(self.page, reruns=run.reruns + 1), True, {}
                    continue
                if reply.script_finished not in (FINISHED, FRAGMENT_FINISHED):
                    raise RunFailed(f"{self.page}: {ForwardMsg.ScriptFinishedStatus.Name(reply.script_finished)}")
                bound = {body.id: body.query_param_key for body in map(element_body, run.elements)
                         if getattr(body, "query_param_key", "")}  # fmt: skip
                self.bound = bound if full else {**self.bound, **bound}  # a fragment's run draws only its own
                # A fragment's run redraws its own widgets: the ones it drew last time and not now are gone.
                kept = {} if full else {w: f for w, f in self.fragment_of.items() if f != fragment}
                self.fragment_of = {**kept, **widgets_drawn}
                return run


def set_widget_value(state: WidgetState, widget_id: str, value: WidgetValue) -> None:
    state.id = widget_id
    if isinstance(value, Click):
        state.trigger_value = True
    elif isinstance(value, bool):
        state.bool_value = value
    elif isinstance(value, int):
        state.int_value = value
    elif isinstance(value, float):
        state.double_value = value
    else:
        state.string_value = value


def with_param(query_string: str, key: str, value: str) -> str:
    """``query_string`` with ``key`` set to ``value`` (as the frontend sets a URL-bound widget's parameter)."""
    kept = [(k, v) for k, v in parse_qsl(query_string, keep_blank_values=True) if k != key]
    return urlencode([*kept, (key, value)])


def element_body(element: Element) -> Any:
    """The element's own message (its ``text_area``, ``plotly_chart``, …)."""
    kind = element.WhichOneof("type")
    assert kind is not None, "an element the server drew has a type"
    return getattr(element, kind)


def drawn(elements: Iterable[Element], kind: str) -> list[Any]:
    return [getattr(e, kind) for e in elements if e.WhichOneof("type") == kind]


def key_of(element_id: str) -> str | None:
    """The user key of an element id (Streamlit writes ids as ``$$ID-<hash>-<key>``), or None."""
    parts = element_id.split("-", 2)
    return parts[2] if element_id.startswith("$$ID-") and len(parts) == 3 and parts[2] != "None" else None


def dataframe(element: Any) -> pd.DataFrame:
    """A drawn ``st.dataframe`` (or styled table) as a pandas DataFrame (Streamlit sends Arrow IPC bytes)."""
    frame: pd.DataFrame = pa.ipc.open_stream(io.BytesIO(element.arrow_data.data)).read_all().to_pandas()
    return frame


def plotly_figure(chart: Any) -> dict[str, Any]:
    """A drawn chart (``Run.charts``) as its plotly JSON (``data`` and ``layout``)."""
    figure: dict[str, Any] = json.loads(chart.bytes)["figure"]
    return figure


def plotly_array(value: Any) -> np.ndarray:
    """A plotly JSON array: a plain (nested) list, or plotly 6's typed form ``{"dtype", "bdata", "shape"}``."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            array = array.reshape([int(n) for n in str(shape).split(",")])
        return array
    return np.asarray(value, dtype=float)
