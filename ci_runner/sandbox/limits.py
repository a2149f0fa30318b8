"""Output capping in one place: keep the first and the last bytes, count what is dropped.

The tail is kept because that is where test runners print their summary line, which the
runner checks the report against.
"""

from collections import deque

from ci_runner.text import clean_bytes


class OutputBuffer:
    def __init__(self, max_bytes: int) -> None:
        self._tail_max = max_bytes // 4
        self._head_max = max_bytes - self._tail_max
        self._head: list[bytes] = []
        self._head_size = 0
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.total = 0

    def append(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_max - self._head_size
        if room > 0:
            self._head.append(data[:room])
            self._head_size += min(room, len(data))
            data = data[room:]
        if not data or not self._tail_max:
            return
        self._tail.append(data)
        self._tail_size += len(data)
        while self._tail_size - len(self._tail[0]) >= self._tail_max:
            self._tail_size -= len(self._tail.popleft())

    @property
    def _kept(self) -> int:
        return self._head_size + min(self._tail_size, self._tail_max)

    @property
    def truncated(self) -> bool:
        return self.total > self._kept

    def text(self) -> str:
        head = b"".join(self._head)
        tail = b"".join(self._tail)[-self._tail_max :] if self._tail_max else b""
        if not self.truncated:
            return clean_bytes(head + tail)
        dropped = self.total - self._kept
        return (
            clean_bytes(head)
            + f"\n[arena: output truncated, {dropped} bytes dropped here]\n"
            + clean_bytes(tail)
        )
