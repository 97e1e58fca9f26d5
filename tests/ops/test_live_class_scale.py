"""A live class past one server (issue 50): students answering one question through HAProxy on 2 replicas that share
a PostgreSQL store, one replica SIGKILLed mid-question (scripts/live_class_load.py, small). Outcomes, not timings:
every answer counted once and kept, each student's last; every tab of the killed replica back in the room, on the
step, with its answer. Skipped without HAProxy or PostgreSQL (failed so in CI for PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import serve
from scripts.live_class_load import FLOOR, Options, markdown, outcome, passed, run_class, side_by_side
from scripts.serve import HAPROXY, NoClassStore, class_store
from tests.postgres_server import require_postgres


def test_a_class_on_two_replicas_loses_no_answer_when_one_is_killed(tiny_pretraining_dir, tmp_path):
    if not Path(HAPROXY).exists():
        pytest.skip("HAProxy is not installed (apt-get install haproxy)")
    require_postgres()
    options = Options(students=10, replicas=2, window=5.0, changes=0.3, kill=True, max_seconds=240,
                      model=str(tiny_pretraining_dir), measure_store=False)  # fmt: skip
    run = run_class(options, tmp_path)
    result = outcome(run)
    report = markdown(run, result, "test")
    assert run.killed is not None and result.affected >= 1, report  # the busiest replica held someone
    assert result.answers_stored == 10 == run.tally_answered == result.students_with_one, report
    assert not result.lost and not result.extra, report
    assert result.back_right == result.affected, report
    assert passed(run, result), report
    assert sum(len(tab.sent) > 1 for tab in run.students) >= 1  # a changed answer counted once, as its last


def test_the_floor_app_takes_the_same_class_and_its_answers_are_checked_in_the_store(tiny_pretraining_dir, tmp_path):
    """``--floor``'s first half (scripts/floor_app.py, one server on SQLite): the tool's students join, answer and are
    told their answer is in, and the store holds each student's last answer, as with the app."""
    options = Options(students=4, replicas=0, window=3.0, changes=0.5, max_seconds=120,
                      model=str(tiny_pretraining_dir), subject=FLOOR)  # fmt: skip
    run = run_class(options, tmp_path)
    result = outcome(run)
    report = markdown(run, result, "floor")
    assert result.answers_stored == 4 == run.tally_answered == result.students_with_one, report
    assert len(result.latencies) == sum(len(tab.sent) for tab in run.students) and passed(run, result), report
    assert run.teacher.all_in_at is not None and "server" in run.cpu, report  # the teacher's count reached 4 of 4
    assert "| the floor (`scripts/floor_app.py`) | 4 |" in side_by_side([(run, result)])


def test_serve_says_what_to_install_without_postgresql(monkeypatch):
    monkeypatch.setattr(serve, "missing", lambda: "PostgreSQL's initdb and pg_ctl were not found")
    no_postgres = r"initdb and pg_ctl were not found\. Install it .*BERTLENS_CLASS_STORE"
    with pytest.raises(NoClassStore, match=no_postgres), class_store({}):
        pass
    with class_store({"BERTLENS_CLASS_STORE": "postgresql://db.example/bertlens"}) as store:  # named: used as is
        assert store.env["BERTLENS_CLASS_STORE"] == "postgresql://db.example/bertlens" and store.pid is None
