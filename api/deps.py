"""What routes get injected: settings, the store's pool, the task queue, the admin check."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Annotated

from celery import Celery
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from psycopg.rows import DictRow

from api.cache import TtlCache
from api.core.config import ApiSettings
from api.endpoint_check import EndpointChecks
from api.errors import ApiError
from api.polls import SharedPolls
from api.schemas.tournaments import TournamentOut
from api.streams import Streams
from arena.players.key_env import KeyEnvRule
from arena.ratings.matrices import PairTally
from arena.scrub import KnownSecrets
from arena.store.pool import Pool
from arena.store.secrets import KeyBox
from ci_runner import CISettings


@dataclass
class Services:
    """Built once at start-up, shared by every request."""

    settings: ApiSettings
    ci_settings: CISettings
    pool: Pool
    queue: Celery
    keys: KeyBox | None
    key_env: KeyEnvRule  # the variables a model's api_key_env may name
    secrets: KnownSecrets  # the service's and every model key given: scrubbed from the logs
    model_cache: TtlCache[dict[str, DictRow]]  # metadata, cutoffs and prices by name
    matrix_cache: TtlCache[list[PairTally]]  # head-to-head tallies by their filters
    refresh_requests: TtlCache[bool]  # windowed leaderboards asked of the workers
    board_cache: TtlCache[bytes]  # leaderboard responses, serialized, by their filters
    checks: EndpointChecks  # `?check=true` of model writes, a bounded number at once
    streams: Streams  # live event streams held open, by client address
    progress_polls: SharedPolls[int, TournamentOut]  # one look per followed tournament


async def services(request: Request) -> Services:
    """Async, as the other trivial dependencies: FastAPI runs a sync one on a worker thread."""
    found: Services = request.app.state.services
    return found


ServicesDep = Annotated[Services, Depends(services)]


async def pool(s: ServicesDep) -> Pool:
    return s.pool


PoolDep = Annotated[Pool, Depends(pool)]

_bearer = HTTPBearer(auto_error=False, description="ARENA_ADMIN_TOKEN")


def _admin_token_given(
    s: Services, credentials: HTTPAuthorizationCredentials | None
) -> bool | None:
    """True: the admin token was given; False: no token was given; None: no admin token is
    configured. A wrong token is refused (401): whoever sends one expects it to count."""
    token = s.settings.admin_token
    if token is None or not token.get_secret_value():
        return None
    if credentials is None:
        return False
    if not secrets.compare_digest(
        credentials.credentials.encode(), token.get_secret_value().encode()
    ):
        raise ApiError(401, ["header", "Authorization"], "wrong admin token")
    return True


def require_admin(
    s: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """Every write: `Authorization: Bearer $ARENA_ADMIN_TOKEN` (a demo without one is open)."""
    given = _admin_token_given(s, credentials)
    if given is None:
        if s.settings.demo:
            return
        raise ApiError(401, ["header", "Authorization"], "no admin token is configured")
    if not given:
        raise ApiError(
            401, ["header", "Authorization"], "writes need `Authorization: Bearer <admin token>`"
        )


Admin = Depends(require_admin)


def is_admin(
    s: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> bool:
    """A public read that shows the admin more (a task's gold patch): whether the admin token
    came with it (a demo without one shows everyone everything, as it takes anyone's writes)."""
    given = _admin_token_given(s, credentials)
    return s.settings.demo if given is None else given


IsAdmin = Annotated[bool, Depends(is_admin)]
