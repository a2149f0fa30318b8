"""Lines of a text report, each cut to a bounded length.

Parsers work on these only, so a hostile megabyte-long line costs linear time and no parser
ever scans more than `MAX_LINE` characters of a single line.
"""

from collections.abc import Iterator

MAX_LINE = 16 * 1024


def report_lines(data: bytes) -> Iterator[str]:
    for line in data.decode("utf-8", errors="replace").splitlines():
        yield line[:MAX_LINE]
