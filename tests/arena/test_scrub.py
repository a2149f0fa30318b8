"""Known secrets are cut out of text and log records, in every form an endpoint may echo them."""

from __future__ import annotations

import json
import logging
import sys
import threading
from urllib.parse import quote

import pytest

from arena.scrub import REDACTED, KnownSecrets, ScrubLogRecords, scrub, scrubbed_logs

KEY = 'sk-live/Abc+123="quoted"-0123456789'


def test_every_form_of_a_secret_is_replaced() -> None:
    text = " | ".join(
        [
            f"Bearer {KEY}",
            json.dumps({"echo": KEY}),
            json.dumps({"echo": KEY}).replace("/", "\\/"),
            f"?key={quote(KEY, safe='')}",
        ]
    )
    scrubbed = scrub(text, [KEY])
    assert scrubbed.count(REDACTED) == 4
    for form in (KEY, "Abc+123", "0123456789"):
        assert form not in scrubbed
    assert scrubbed.startswith(f"Bearer {REDACTED} | ")


def test_a_secret_containing_another_is_cut_out_whole() -> None:
    short, long = "password-1234", "password-1234-and-more"
    assert scrub(f"{long} {short}", [short, long]) == f"{REDACTED} {REDACTED}"


def test_short_values_and_text_without_secrets_are_left_alone() -> None:
    assert scrub("an ordinary answer: x = 1", ["x", "1", ""]) == "an ordinary answer: x = 1"
    assert scrub("nothing here", []) == "nothing here"


def test_known_secrets_grow_and_scrub_from_any_thread() -> None:
    known = KnownSecrets(["service-secret-key", None, "short"])
    assert len(known) == 1
    threads = [threading.Thread(target=known.add, args=(f"model-key-{n:04d}",)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(known) == 21
    text = "service-secret-key model-key-0007 model-key-0019 short"
    assert known.scrub(text) == f"{REDACTED} {REDACTED} {REDACTED} short"


def _record(msg: str, args: object = None, exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise RuntimeError(f"endpoint said {KEY}")
        except RuntimeError:
            exc_info = sys.exc_info()
    return logging.LogRecord("t", logging.ERROR, __file__, 1, msg, args, exc_info)  # type: ignore[arg-type]


def test_a_log_record_without_a_secret_is_untouched() -> None:
    record = _record('%s - "%s %s HTTP/%s" %d', ("127.0.0.1", "GET", "/api/models", "1.1", 200))
    ScrubLogRecords(KnownSecrets([KEY])).filter(record)
    assert record.args == ("127.0.0.1", "GET", "/api/models", "1.1", 200)  # uvicorn reads them


def test_a_log_record_keeps_its_shape_with_a_secret_in_a_string_argument() -> None:
    record = _record("step failed: %s (%d)", (f"HTTP 401: {KEY}", 2))
    ScrubLogRecords(KnownSecrets([KEY])).filter(record)
    assert record.getMessage() == f"step failed: HTTP 401: {REDACTED} (2)"
    assert isinstance(record.args, tuple) and record.args[1] == 2


def test_a_log_record_with_a_secret_in_an_object_or_a_traceback_is_rendered_scrubbed() -> None:
    record = _record("failed: %r", (RuntimeError(KEY),), exc=True)
    ScrubLogRecords(KnownSecrets([KEY])).filter(record)
    shown = logging.Formatter().format(record)
    assert KEY not in shown and "endpoint said [redacted]" in shown
    assert "Traceback" in shown and record.exc_info is None


def test_scrubbed_logs_cover_every_handler_for_the_block_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("arena.test_scrub")
    with caplog.at_level(logging.INFO):
        with scrubbed_logs(KnownSecrets([KEY])):
            log.info("the endpoint answered %s", f"Bearer {KEY}")
            try:
                raise ValueError(KEY)
            except ValueError:
                log.exception("a step failed")
        log.info("after: %s", KEY)  # the block is over: this test's own text, shown as it is
    text = caplog.text
    assert f"the endpoint answered Bearer {REDACTED}" in text
    assert text.count(KEY) == 1 and f"after: {KEY}" in text
