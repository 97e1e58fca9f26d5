"""When ``scripts/serve.py`` starts a dead replica again (``Cluster.replace_dead``), on a fake clock with fake
processes: no HAProxy, no Streamlit. tests/ops/test_scale_out.py checks the same on real processes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from scripts import serve
from scripts.serve import RESTART_SPACING, Cluster

DELAY = 20.0


@dataclass
class FakeProcess:
    returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(serve.time, "monotonic", lambda: now[0])
    return now


def cluster_of(replicas: int, tmp_path, monkeypatch, clock, failing: bool = False) -> Cluster:
    """Replicas started long ago and alive; a restart starts a live fake (or one whose start fails)."""
    cluster = Cluster(replicas, 0, tmp_path, preload=False, restart_delay=DELAY)
    for replica in cluster.members:
        replica.process, replica.started = FakeProcess(), clock[0] - 100

    def start(replica) -> None:
        replica.process, replica.started = FakeProcess(), clock[0]

    def ready(replica) -> None:
        if failing:
            raise RuntimeError("not ready")

    monkeypatch.setattr(cluster, "start_replica", start)
    monkeypatch.setattr(cluster, "wait_ready", ready)
    monkeypatch.setattr(cluster, "wait_balancer", lambda states: None)
    monkeypatch.setattr(cluster.balancer, "set_state", lambda name, state: None)
    monkeypatch.setattr(serve, "warm_every_page", lambda url: None)
    monkeypatch.setattr(serve, "stop_group", lambda process: setattr(process, "returncode", -15))
    return cluster


def test_a_dead_replica_waits_the_delay_while_another_serves(tmp_path, monkeypatch, clock):
    cluster = cluster_of(2, tmp_path, monkeypatch, clock)
    cluster.members[0].process.returncode = -9
    assert cluster.replace_dead() == []  # found dead now
    clock[0] += DELAY - 0.5
    assert cluster.replace_dead() == []
    clock[0] += 0.5
    assert cluster.replace_dead() == ["r1"]
    assert cluster.members[0].alive and cluster.members[0].found_dead is None


def test_the_only_replica_is_started_again_at_once(tmp_path, monkeypatch, clock):
    cluster = cluster_of(1, tmp_path, monkeypatch, clock)
    cluster.members[0].process.returncode = -9
    assert cluster.replace_dead() == ["r1"]


def test_the_only_replica_dying_again_waits_the_spacing(tmp_path, monkeypatch, clock):
    cluster = cluster_of(1, tmp_path, monkeypatch, clock)
    cluster.members[0].process.returncode = -9
    assert cluster.replace_dead() == ["r1"]
    cluster.members[0].process.returncode = -9  # dies right after its restart
    clock[0] += RESTART_SPACING - 1
    assert cluster.replace_dead() == []
    clock[0] += 1
    assert cluster.replace_dead() == ["r1"]


def test_a_restart_that_fails_waits_the_delay_again_before_the_next(tmp_path, monkeypatch, clock):
    cluster = cluster_of(2, tmp_path, monkeypatch, clock, failing=True)
    cluster.members[0].process.returncode = -9
    cluster.replace_dead()
    clock[0] += DELAY
    with pytest.raises(RuntimeError):
        cluster.replace_dead()  # started, never ready: stopped again
    clock[0] += 0.5  # serve.py's next look
    assert cluster.replace_dead() == []  # not another start at once, on the cores the other replica needs
    clock[0] += DELAY
    with pytest.raises(RuntimeError):
        cluster.replace_dead()
