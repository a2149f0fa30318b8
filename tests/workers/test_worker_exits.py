"""`arena worker` exits non-zero when it can no longer take work, so its supervisor restarts it;
a short broker outage is left to Celery's own reconnect."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

import pytest
import redis
from kombu.exceptions import OperationalError

from arena.store.settings import ServiceSettings
from tests.servers import Redis
from tests.workers.conftest import Workers
from workers.app import make_app
from workers.watchdog import EXIT_CONSUMER_DOWN, LoopClock, watch

DOWN_S = 10.0
# the watchdog's own bound, plus room for a loaded machine (2 shared cores)
EXIT_WITHIN_S = DOWN_S + 40


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_watchdog_exits_only_once_the_loop_was_silent_too_long() -> None:
    fake = FakeTime()
    loop = LoopClock(fake)
    exits: list[int] = []
    thread = watch(0.6, exits.append, loop)  # looks every 0.2 s
    for _ in range(10):  # a loop that beats keeps the worker alive
        fake.now += 0.3
        loop.beat()
        time.sleep(0.1)
    assert exits == [] and thread.is_alive()
    fake.now += 0.7
    thread.join(timeout=10)
    assert exits == [EXIT_CONSUMER_DOWN] and not thread.is_alive()


def test_a_consumer_without_an_event_loop_is_not_taken_for_dead() -> None:
    fake = FakeTime()
    loop = LoopClock(fake)
    loop.blind = True  # what LoopBeat sets when the consumer has no hub to beat from
    fake.now += 1000
    assert loop.silent_for() == 0


def _log(workers: Workers, index: int) -> str:
    return (workers.logs / f"worker-{index}.log").read_text(errors="replace")


def _wait_for(condition: str, check: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {condition}")
        time.sleep(0.5)


def _exit_code_within(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int, float]:
    started = time.monotonic()
    code = proc.wait(timeout=timeout)
    return code, time.monotonic() - started


def _answers_ping(broker: Redis, proc: subprocess.Popen[bytes]) -> bool:
    app = make_app(ServiceSettings(broker_url=broker.url))
    try:
        replies = app.control.ping(timeout=3)
    except (redis.ConnectionError, OperationalError):  # the broker is just back
        return False
    finally:
        app.close()
    return any(f"-{proc.pid}@" in name for reply in replies for name in reply)


def _restart(broker: Redis, outage_s: float) -> None:
    broker.stop()
    time.sleep(outage_s)
    broker.start()


@pytest.mark.waits
def test_a_short_outage_is_survived_and_a_lost_broker_ends_the_worker(
    service_env: dict[str, str], workers: Workers, broker: Redis
) -> None:
    workers.env = {**service_env, "ARENA_WORKER_DOWN_S": str(DOWN_S)}
    proc = workers.start(queues="control", concurrency=1)
    _wait_for("the worker to answer", lambda: _answers_ping(broker, proc), 60)

    _restart(broker, outage_s=3)  # shorter than DOWN_S: Celery reconnects by itself
    _wait_for("the worker to answer again", lambda: _answers_ping(broker, proc), 60)
    time.sleep(DOWN_S)  # and it stays: the loop beats again
    assert proc.poll() is None, _log(workers, 0)
    assert _answers_ping(broker, proc)

    broker.stop()  # for good
    code, took = _exit_code_within(proc, EXIT_WITHIN_S)
    assert code == EXIT_CONSUMER_DOWN, _log(workers, 0)
    assert took >= DOWN_S * 0.9  # Celery's reconnect had its time first
    assert "has not run for" in _log(workers, 0)
    broker.start()  # for the fixture's teardown


@pytest.mark.waits
@pytest.mark.parametrize("fault", ["raise", "hang"])
def test_a_consumer_that_breaks_on_reconnect_ends_the_worker(
    fault: str, service_env: dict[str, str], workers: Workers, broker: Redis
) -> None:
    """The broker comes back, but the consumer does not: the worker must not stay up deaf."""
    workers.env = {
        **service_env,
        "ARENA_WORKER_DOWN_S": str(DOWN_S),
        "ARENA_TEST_CONSUMER_FAULT": fault,
    }
    deaf = [sys.executable, "-m", "tests.workers.deaf", "worker", "--queues", "control"]
    proc = workers.start(args=deaf)
    _wait_for("the worker to answer", lambda: _answers_ping(broker, proc), 60)

    _restart(broker, outage_s=1)
    code, _ = _exit_code_within(proc, EXIT_WITHIN_S)
    log = _log(workers, 0)
    assert code != 0, log
    if fault == "hang":  # alive but deaf: only the watchdog can tell
        assert code == EXIT_CONSUMER_DOWN, log
