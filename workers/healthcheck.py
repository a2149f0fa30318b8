"""`python -m workers.healthcheck`: is the worker of this host (container) answering its broker?

A container's health check: the process may be alive while its consumer is gone (a broker that
came back after the worker gave up on it), so only a reply over the broker counts. Worker names
end in `@<hostname>` (see `arena worker`), which tells this container's worker from the others.
"""

from __future__ import annotations

import socket
import sys

from workers.app import app


def main() -> int:
    suffix = f"@{socket.gethostname()}"
    try:
        replies = app.control.ping(timeout=5.0) or []
    except Exception as exc:  # any broker failure means unhealthy, with its reason
        print(f"unhealthy: the broker does not answer: {type(exc).__name__}: {exc}")
        return 1
    mine = [name for reply in replies for name in reply if name.endswith(suffix)]
    if not mine:
        print(f"unhealthy: no worker named *{suffix} answered a ping over the broker")
        return 1
    print(f"healthy: {', '.join(sorted(mine))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
