"""A tab's page runs, paced by a token bucket: bursts of clicks run at once, a flood waits its turn."""

from __future__ import annotations

import pytest

from bertlens.pacing import BURST_SECONDS, RunPace


def test_a_burst_of_clicks_runs_at_once_and_the_next_run_waits_its_turn():
    pace = RunPace(per_minute=120)  # 2 a second, 20 at once
    assert pace.burst == 120 * BURST_SECONDS / 60 == 20
    assert [pace.wait(now=0.0) for _ in range(20)] == [0.0] * 20
    assert pace.wait(now=0.0) == pytest.approx(0.5)  # the 21st: half a second, one run's worth at 2 a second
    assert pace.wait(now=0.5) == pytest.approx(0.5)  # it took the token that came; the next one is another 0.5 s


def test_a_tab_asking_as_fast_as_it_can_gets_the_budgets_rate():
    pace, now, runs = RunPace(per_minute=60), 0.0, 0
    while now < 100.0:  # each run starts when its wait is over and takes 30 ms
        now += pace.wait(now) + 0.03
        runs += 1
    assert 100 + pace.burst - 1 <= runs <= 100 + pace.burst + 1  # one a second, after the first burst


def test_an_idle_tab_gets_its_burst_back_and_no_more():
    pace = RunPace(per_minute=60)
    for _ in range(int(pace.burst)):
        pace.wait(now=0.0)
    assert pace.wait(now=3600.0) == 0.0  # an hour later: the burst is back ...
    assert pace.tokens == pace.burst - 1  # ... and only the burst, not an hour's worth
    assert RunPace(per_minute=1).burst == 1  # a slow pace still lets one run through at once


def test_runs_replaced_before_their_wait_was_over_leave_no_debt():
    """A newer click stops a waiting run before it sleeps: the next run waits one run's worth, not the sum."""
    pace = RunPace(per_minute=120)
    for _ in range(int(pace.burst)):
        pace.wait(now=0.0)
    waits = [pace.wait(now=0.001 * n) for n in range(200)]  # 200 runs, each replaced a millisecond later
    assert max(waits) == pytest.approx(0.5, abs=0.002)


def test_a_wait_too_short_to_notice_is_not_made():
    pace = RunPace(per_minute=120)
    for _ in range(int(pace.burst)):
        pace.wait(now=1e9)
    assert pace.wait(now=1e9 + 0.499) == 0.0  # 2 ms short of a whole run's worth: not worth a wait
