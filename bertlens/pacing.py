"""One browser tab's share of a shared server: its page runs paced by a token bucket."""

from __future__ import annotations

from dataclasses import dataclass, field

BURST_SECONDS = 10.0  # a tab may make this many seconds' worth of its runs at once (a burst of clicks)
MIN_WAIT_SECONDS = 0.01  # a shorter wait is not worth making (nor a message)


@dataclass
class RunPace:
    """At most ``per_minute`` page runs a minute on average, ``BURST_SECONDS``' worth of them at once.

    A person clicking through pages never waits. A tab that asks for runs faster (a script, a held key)
    waits before each run; waiting uses no core, so the rest of the class keeps the server's cores.
    """

    per_minute: int
    tokens: float = field(init=False)
    updated: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.tokens = self.burst

    @property
    def burst(self) -> float:
        return max(1.0, self.per_minute * BURST_SECONDS / 60)

    def wait(self, now: float) -> float:
        """Seconds the run starting at ``now`` waits first (0 within the pace); counts the run.

        A run that was replaced before its wait was over (a newer click) owes nothing more: the next
        run waits one run's worth from its own start, never a growing debt.
        """
        rate = self.per_minute / 60
        if self.updated is not None:
            self.tokens = min(self.burst, self.tokens + max(0.0, now - self.updated) * rate)
        self.updated = now
        self.tokens -= 1
        wait = -self.tokens / rate
        if wait < MIN_WAIT_SECONDS:
            return 0.0
        self.tokens, self.updated = 0.0, now + wait  # the run takes the token that comes at the end of its wait
        return wait
