"""Package resolution as of a task's date: the cutoff, and what points pip, uv and npm at it.

An environment build of a task created on day D installs what its CI job would have
installed on day D: every PyPI resolution goes through the date-cut index
(`ci_runner.timemachine_index`, run inside the build container), uv also gets
`UV_EXCLUDE_NEWER`, npm `npm_config_before`. Later releases, which may well break an old
tree, are invisible.
"""

from __future__ import annotations

from datetime import UTC, datetime, time
from pathlib import Path

INDEX_SCRIPT = Path(__file__).with_name("timemachine_index.py")


def normalize_cutoff(as_of: str) -> str:
    """`as_of` (an ISO date or date-time) as an RFC 3339 UTC time. A bare date means the end
    of that day: what had been released by the evening of the task's day was there for it."""
    text = as_of.strip()
    try:
        if len(text) == 10:
            day = datetime.fromisoformat(text).date()
            when = datetime.combine(day, time(23, 59, 59), tzinfo=UTC)
        else:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
            when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    except ValueError as exc:
        raise ValueError(f"as_of must be an ISO date or date-time, got {as_of!r}") from exc
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def index_command(
    cutoff: str, upstream: str, script: str, port_file: str, crates_upstream: str
) -> str:
    """A shell command that starts the date-cut index in the background (when the container
    has a python3) and waits for its port; it prints the port, or nothing without python3."""
    return f"""command -v python3 >/dev/null || exit 0
rm -f {port_file}
setsid python3 {script} {cutoff} {upstream} {port_file} {crates_upstream} \
  > {port_file}.log 2>&1 < /dev/null &
echo $! > {port_file}.pid
for _ in $(seq 100); do
  [ -s {port_file} ] && {{ cat {port_file}; exit 0; }}
  sleep 0.1
done
echo "the date-cut package index did not start:" >&2; cat {port_file}.log >&2; exit 1"""


def stop_index_command(port_file: str) -> str:
    """A shell command that stops the date-cut index, if it was started."""
    return f"if [ -s {port_file}.pid ]; then kill $(cat {port_file}.pid) 2>/dev/null || true; fi"


def resolution_env(cutoff: str, index_port: int | None) -> dict[str, str]:
    """What makes pip, uv and npm (and the pip of tox's and nox's virtualenvs, which inherit
    PIP_*) resolve as of `cutoff`: uv filters by upload time itself, pip goes through the
    date-cut index when it runs (`index_port`), and Cargo too where a repo has no lock."""
    env = {"UV_EXCLUDE_NEWER": cutoff, "npm_config_before": cutoff}
    if index_port is not None:
        env["PIP_INDEX_URL"] = f"http://127.0.0.1:{index_port}/simple"
        # read by the Rust profile's `lock_as_of`: Cargo's sparse index as of the date
        env["ARENA_CRATES_INDEX"] = f"sparse+http://127.0.0.1:{index_port}/crates/"
    return env


# variables that would let pip go around the date-cut index
BYPASSES = ("PIP_EXTRA_INDEX_URL",)
