"""Per-model concurrency across every worker and host: leases in a Redis sorted set.

Each holder is a member scored by when its lease ends; expired leases are dropped before
counting, so a worker that dies frees its slot when its lease runs out. Redis's own clock
decides, so hosts with skewed clocks agree.
"""

from __future__ import annotations

import time

import redis

_ACQUIRE = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1e6
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], t + tonumber(ARGV[3]), ARGV[1])
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[3])) + 1)
  return 1
end
return 0
"""


class ModelSlots:
    def __init__(self, client: redis.Redis, lease_s: float) -> None:
        self._client = client
        self._lease_s = lease_s
        self._acquire = client.register_script(_ACQUIRE)

    @staticmethod
    def _key(model: str) -> str:
        return f"arena:slots:{model}"

    def try_acquire(self, model: str, limit: int, holder: str) -> bool:
        """Takes (or renews) a slot; False when `limit` other live holders have one."""
        return bool(self._acquire(keys=[self._key(model)], args=[holder, limit, self._lease_s]))

    def acquire(self, model: str, limit: int, holder: str, poll_s: float = 0.2) -> None:
        while not self.try_acquire(model, limit, holder):
            time.sleep(poll_s)

    def release(self, model: str, holder: str) -> None:
        self._client.zrem(self._key(model), holder)
