"""Per-model slots in Redis: a limit across holders, freed when a holder's lease runs out."""

from __future__ import annotations

import time

import redis

from tests.servers import Redis
from workers.slots import ModelSlots


def test_a_model_limit_holds_across_holders_and_dead_holders_free_their_slot(broker: Redis) -> None:
    client = redis.Redis.from_url(broker.url)
    slots = ModelSlots(client, lease_s=0.5)
    other_host = ModelSlots(redis.Redis.from_url(broker.url), lease_s=0.5)
    assert slots.try_acquire("m", 2, "h1")
    assert other_host.try_acquire("m", 2, "h2")
    assert not slots.try_acquire("m", 2, "h3")
    assert slots.try_acquire("m", 2, "h1")  # a holder renews its own slot
    assert slots.try_acquire("other-model", 2, "h3")
    slots.release("m", "h1")
    assert slots.try_acquire("m", 2, "h3")
    time.sleep(0.7)  # h2 and h3 died without releasing
    assert slots.try_acquire("m", 2, "h4") and slots.try_acquire("m", 2, "h5")
