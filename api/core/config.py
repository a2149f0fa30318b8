"""The API's settings, read once from ARENA_* variables (the store's and the workers' included)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from arena.store.settings import ServiceSettings


class InsecureSettings(RuntimeError):
    """The server would accept writes from anyone or keep API keys in the clear."""


class ApiSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore")

    demo: bool = False  # a local demo: may run without admin token and secret key
    web_dir: Path = Path("frontend/dist")  # the built website, served at / when it exists
    stats_ttl_s: float = 10.0  # model metadata and head-to-head matrices are cached this long
    board_ttl_s: float = 1.0  # a served leaderboard (its JSON) is reused this long; 0: never
    # a finished match's gold patch and tests, answers' text and diffs and CI logs, shown to
    # every reader: for a corpus no tournament will play again (else the admin's only, as a
    # task can be scheduled again and a model with web access could read its answer here)
    match_gold_public: bool = False
    check_concurrency: int = Field(default=8, gt=0)  # endpoint checks at once; more wait
    # live event streams (server-sent events), per API process: how many one client address
    # and all clients together may hold open (beyond either: 429 with Retry-After), how often
    # a keep-alive comment goes out, and how long a stream may go without an event before it
    # is closed (with an `idle` event)
    streams_per_client: int = Field(default=8, gt=0)
    streams_total: int = Field(default=200, gt=0)
    stream_keepalive_s: float = Field(default=15.0, gt=0)
    stream_idle_s: float = Field(default=900.0, gt=0)
    stream_retry_after_s: int = Field(default=30, gt=0)  # the Retry-After of a refused stream

    def check_secure(self) -> None:
        """Refuse to serve without both secrets, unless this is a local demo."""
        if self.demo:
            return
        missing = [
            name
            for name, value in (
                ("ARENA_ADMIN_TOKEN", self.admin_token),
                ("ARENA_SECRET_KEY", self.secret_key),
            )
            if value is None or not value.get_secret_value()
        ]
        if missing:
            raise InsecureSettings(
                f"{' and '.join(missing)} must be set (or run a local demo: --demo or"
                " ARENA_DEMO=1, where writes need no token and API keys cannot be stored)"
            )
