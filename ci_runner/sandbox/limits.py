"""Output capping in one place: keep the first N bytes, count the rest."""


class OutputBuffer:
    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._chunks: list[bytes] = []
        self._kept = 0
        self.total = 0

    def append(self, data: bytes) -> None:
        self.total += len(data)
        room = self._max - self._kept
        if room > 0:
            piece = data[:room]
            self._chunks.append(piece)
            self._kept += len(piece)

    @property
    def truncated(self) -> bool:
        return self.total > self._kept

    def text(self) -> str:
        body = b"".join(self._chunks).decode("utf-8", errors="replace")
        if self.truncated:
            body += f"\n[arena: output truncated, {self.total - self._kept} more bytes dropped]\n"
        return body
