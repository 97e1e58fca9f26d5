"""A replica dies under a student: the page comes back, the same, from another replica (real Chromium).

Two replicas behind HAProxy (scripts/serve.py's Cluster, deploy/haproxy.cfg) on the tiny pre-training
model. The student opens a deep link, types a new sentence A (the view now differs from the link they
opened; the URL follows), and the replica serving them is SIGKILLed. Streamlit's frontend reconnects
through the balancer to the other replica; when it was idle it sends no rerun there, so app.py's
reload-on-reconnect watcher (components/ui/reconnect.py) reloads the URL, with a cookie that puts the reopened
view's first run ahead of the live replica's queue. The test reads, through Chrome's
DevTools protocol, every websocket handshake (its Cookie header and the X-BertLens-Replica response
header) and the frames each websocket received, so it knows the view was drawn again by a live replica,
not left over in the page.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from components.ui.reconnect import REOPENED_COOKIE
from scripts.serve import Cluster
from scripts.server import free_port
from tests.browser.conftest import open_tab, wait_for_run
from tests.browser.test_pages import metric, p_is_next, reference, type_into  # noqa: F401 (reference: a fixture)
from tests.conftest import rounded

RESTORE_SECONDS = 15  # from the kill to the same view drawn again by the other replica
A, B = "The weather is nice today.", "Let's go for a walk."
NEW_A = "Students read about attention heads."


class Handshakes:
    """Every websocket the page opened: the cookie it sent, the replica that answered, frames it received."""

    def __init__(self, context, page):
        self.sockets: dict[str, dict] = {}
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.webSocketWillSendHandshakeRequest", self._request)
        cdp.on("Network.webSocketHandshakeResponseReceived", self._response)
        cdp.on("Network.webSocketFrameReceived", self._frame)

    def _request(self, event) -> None:
        headers = {k.lower(): v for k, v in event["request"]["headers"].items()}
        self.sockets[event["requestId"]] = {"cookie": headers.get("cookie", ""), "replica": None, "frames": 0,
                                            "opened": time.monotonic()}  # fmt: skip

    def _response(self, event) -> None:
        headers = {k.lower(): v for k, v in event["response"]["headers"].items()}
        self.sockets.setdefault(event["requestId"], {"cookie": "", "frames": 0, "opened": time.monotonic()})
        self.sockets[event["requestId"]]["replica"] = headers.get("x-bertlens-replica")

    def _frame(self, event) -> None:
        if event["requestId"] in self.sockets:
            self.sockets[event["requestId"]]["frames"] += 1

    def opened_after(self, moment: float) -> list[dict]:
        return [s for s in self.sockets.values() if s["opened"] > moment]


@pytest.fixture(scope="module")
def cluster(tiny_pretraining_dir, tmp_path_factory):
    env = {**os.environ, "BERTLENS_MODEL": str(tiny_pretraining_dir), "HF_HUB_OFFLINE": "1"}
    env.pop("BERTLENS_HOSTED", None)
    workdir: Path = tmp_path_factory.mktemp("failover")
    with Cluster(2, free_port(), workdir, "127.0.0.1", env) as running:
        yield running


def test_killed_replica_costs_no_student_their_view(cluster, reference, browser):  # noqa: F811
    # The session's browser: a second sync Playwright cannot start while the first one runs.
    with browser.new_context(viewport={"width": 1400, "height": 1000}) as context:
        page = open_tab(context)
        handshakes = Handshakes(context, page)

        response = page.goto(f"{cluster.url}/next_sentence?a={A}&b={B}")
        served_by = response.headers["x-bertlens-replica"]
        wait_for_run(page)
        type_into(page, "a", NEW_A)  # the view now differs from the link the student opened
        expected = rounded(p_is_next(reference, NEW_A, B), 4)
        expect(metric(page, "P(IsNext)")).to_have_text(expected)
        wait_for_run(page)
        url = page.url
        assert "Students+read" in url or "Students%20read" in url, url  # the URL follows the view

        # The websocket upgrade carried the affinity cookie and landed on the replica that served the page.
        (first,) = handshakes.sockets.values()
        assert f"BERTLENS_REPLICA={served_by}" in first["cookie"], first
        assert first["replica"] == served_by

        victim = next(r for r in cluster.members if r.name == served_by)
        killed_at = time.monotonic()
        os.kill(victim.process.pid, signal.SIGKILL)

        # Back: a new websocket to the other replica, which drew the page again (frames), then the same view.
        deadline = killed_at + RESTORE_SECONDS
        while not any(
            s["replica"] not in (None, served_by) and s["frames"] > 0 for s in handshakes.opened_after(killed_at)
        ):
            assert time.monotonic() < deadline, (
                f"no live replica drew the page in {RESTORE_SECONDS} s: {handshakes.sockets}"
            )
            page.wait_for_timeout(200)
        remaining_ms = max(1000, (deadline - time.monotonic()) * 1000)
        expect(page.locator('[data-testid="stApp"]')).to_have_attribute("data-test-connection-state", "CONNECTED",
                                                                         timeout=remaining_ms)  # fmt: skip
        expect(metric(page, "P(IsNext)")).to_have_text(expected, timeout=remaining_ms)
        restored_seconds = time.monotonic() - killed_at
        wait_for_run(page)
        assert page.url == url
        expect(page.locator('[data-testid="stMain"] h1').first).to_have_text("Next sentence")
        expect(page.locator(".st-key-a input")).to_have_value(NEW_A)
        expect(page.locator(".st-key-b input")).to_have_value(B)
        expect(metric(page, "P(IsNext)")).to_have_text(expected)
        new_sockets = [s for s in handshakes.opened_after(killed_at) if s["replica"]]
        assert new_sockets and all(s["replica"] != served_by for s in new_sockets), new_sockets
        # The reload asked for the reopened view's priority, and the page, once back, cleared the request.
        assert any(f"{REOPENED_COOKIE}=1" in s["cookie"] for s in new_sockets), new_sockets
        # Cleared by the watcher's script as it mounts, which may come after the view; polled for well within
        # the cookie's own 60 s max-age, so that its expiry cannot pass for the clearing.
        page.wait_for_function("name => !document.cookie.includes(name)", arg=REOPENED_COOKIE, timeout=10_000)
        assert restored_seconds <= RESTORE_SECONDS
        print(f"\nrestored on {new_sockets[-1]['replica']} {restored_seconds:.1f} s after the kill")
