"""Whether a conda channel answers from this machine.

Arena does not build conda environments. A leg that needs one is refused either way, but
whose matter that is differs: where no channel answers (a machine without access to
anaconda.org), no tool could build it here, and the user's fix is network access; where one
answers, it is Arena's scope. The channel is asked once per process.
"""

from __future__ import annotations

import ssl
from functools import lru_cache
from pathlib import Path

import httpx

PROBE_TIMEOUT_S = 10.0


@lru_cache(maxsize=8)
def channel_unreachable(channel: str, ca_bundle: Path | None = None) -> str | None:
    """Why `channel` (a conda channel's URL) cannot be reached, or None when it answers.

    The system's trust store is used, or `ca_bundle` (a TLS-intercepting proxy's CA), as the
    environment builds use it; proxies come from the environment."""
    url = f"{channel.rstrip('/')}/noarch/repodata.json"
    context = ssl.create_default_context(cafile=str(ca_bundle) if ca_bundle else None)
    try:
        answer = httpx.head(url, timeout=PROBE_TIMEOUT_S, verify=context, follow_redirects=True)
    except httpx.HTTPError as exc:
        return f"{url}: {exc or type(exc).__name__}"
    if answer.status_code >= 400:
        return f"{url}: HTTP {answer.status_code}"
    return None
