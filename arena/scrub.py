"""Known secrets cut out of text before it is stored, logged or served.

A model endpoint's answers and refusals are foreign text: an endpoint that echoes the
`Authorization` header it was sent puts the key into an error message, from there into a match's
reason, the store, the public evidence and the logs. Every such text passes through `scrub` with
the secrets its process knows (`KnownSecrets`: the service's own, and each model key as it is
learned) where it enters the system; log records are scrubbed as they are made (`scrubbed_logs`).
This is the one way to do it.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

REDACTED = "[redacted]"
# a shorter value would cut ordinary words out of answers; no real key or password is this short
MIN_SECRET_CHARS = 8


def _forms(secret: str) -> set[str]:
    """How a secret may appear in text an endpoint sends back: as written, JSON-escaped (also
    with `/` escaped, as some servers write it) and percent-encoded."""
    escaped = json.dumps(secret)[1:-1]
    return {secret, escaped, escaped.replace("/", "\\/"), quote(secret, safe="")}


def _pattern(secrets: Iterable[str]) -> re.Pattern[str] | None:
    forms = {form for s in secrets if len(s) >= MIN_SECRET_CHARS for form in _forms(s)}
    if not forms:
        return None
    # longest first: a secret that contains another is cut out whole
    return re.compile("|".join(re.escape(f) for f in sorted(forms, key=lambda f: (-len(f), f))))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of every secret (in any of its forms) replaced by REDACTED.

    Scrub before cutting text short: a secret cut in half is no longer found."""
    pattern = _pattern(secrets)
    return text if pattern is None else pattern.sub(REDACTED, text)


class KnownSecrets:
    """The secrets one process knows: the service's own from its settings, and each model key
    as the process learns it. It only grows; reading and adding are thread-safe."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._lock = threading.Lock()
        self._secrets: frozenset[str] = frozenset()
        self._compiled: re.Pattern[str] | None = None
        self.add(*secrets)

    def add(self, *secrets: str | None) -> None:
        """Learn more secrets (None and values too short to scrub are ignored)."""
        with self._lock:
            grown = self._secrets | {s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}
            if grown != self._secrets:
                self._secrets = grown
                self._compiled = _pattern(grown)

    def scrub(self, text: str) -> str:
        """`scrub(text, the secrets known now)`, with the pattern compiled once per change."""
        pattern = self._compiled
        return text if pattern is None else pattern.sub(REDACTED, text)

    def __len__(self) -> int:
        return len(self._secrets)


class ScrubLogRecords(logging.Filter):
    """Cuts known secrets out of a log record: its message, its traceback and its stack.

    A record without a secret is left exactly as it was (a formatter that reads `args`, as
    uvicorn's access log does, keeps working); one with a secret in a string argument keeps its
    shape with that argument scrubbed; otherwise its message is rendered and scrubbed whole.
    """

    def __init__(self, secrets: KnownSecrets) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        if not len(self.secrets):
            return True
        self._scrub_message(record)
        if record.exc_info and record.exc_info[0] is not None:
            text = record.exc_text or logging.Formatter().formatException(record.exc_info)
            scrubbed = self.secrets.scrub(text)
            if scrubbed != text:  # no formatter may render the raw exception again
                record.exc_text, record.exc_info = scrubbed, None
        elif record.exc_text:
            record.exc_text = self.secrets.scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self.secrets.scrub(record.stack_info)
        return True

    def _scrub_message(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: logging reports it as it would have
            return
        wanted = self.secrets.scrub(message)
        if wanted == message:
            return
        if isinstance(record.msg, str):
            record.msg = self.secrets.scrub(record.msg)
        record.args = self._scrub_args(record.args)
        try:
            if record.getMessage() == wanted:
                return
        except Exception:
            pass
        record.msg, record.args = wanted, None  # a secret in a non-string argument

    def _scrub_args(self, args: Any) -> Any:
        def one(value: Any) -> Any:
            return self.secrets.scrub(value) if isinstance(value, str) else value

        if isinstance(args, tuple):
            return tuple(one(a) for a in args)
        if isinstance(args, Mapping):
            return {k: one(v) for k, v in args.items()}
        return args


@contextmanager
def scrubbed_logs(secrets: KnownSecrets) -> Iterator[None]:
    """Every log record this process makes is scrubbed as it is made, for the block.

    A record factory, not a filter on handlers: Celery and uvicorn set up their own handlers
    after we start, and a filter on a handler they replace would be gone."""
    scrub_record = ScrubLogRecords(secrets)
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        scrub_record.filter(record)
        return record

    logging.setLogRecordFactory(factory)
    try:
        yield
    finally:
        if logging.getLogRecordFactory() is factory:  # else another block replaced it since
            logging.setLogRecordFactory(previous)
