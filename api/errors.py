"""Every 4xx body has one shape: a list of {loc, msg, type} naming the field and the problem."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from psycopg import DataError, OperationalError
from psycopg_pool import PoolTimeout

from api.schemas.common import ErrorBody, ErrorItem

log = logging.getLogger(__name__)


class ApiError(Exception):
    """A refusal a user can act on: where (loc) and what is wrong (msg)."""

    def __init__(
        self,
        status: int,
        loc: list[str | int],
        msg: str,
        kind: str = "value_error",
        headers: dict[str, str] | None = None,  # e.g. a 429's Retry-After
    ) -> None:
        super().__init__(msg)
        self.status = status
        self.loc = loc
        self.msg = msg
        self.kind = kind
        self.headers = headers or {}


def not_found(loc: list[str | int], msg: str) -> ApiError:
    return ApiError(404, loc, msg, "not_found")


def _body(items: list[ErrorItem]) -> dict[str, object]:
    return ErrorBody(detail=items).model_dump()


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else {}
        item = ErrorItem(loc=exc.loc, msg=exc.msg, type=exc.kind)
        return JSONResponse(
            _body([item]), status_code=exc.status, headers={**headers, **exc.headers}
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        """Pydantic's errors without `input` and `ctx`: they could echo a submitted API key."""
        items = [
            ErrorItem(
                loc=[p if isinstance(p, int) else str(p) for p in err.get("loc", ())],
                msg=str(err.get("msg", "invalid")),
                type=str(err.get("type", "value_error")),
            )
            for err in exc.errors()
        ]
        return JSONResponse(_body(items), status_code=422)

    @app.exception_handler(DataError)
    @app.exception_handler(UnicodeEncodeError)
    async def _unstorable(_: Request, exc: Exception) -> JSONResponse:
        """PostgreSQL keeps no NUL character and no lone UTF-16 surrogate in text."""
        item = ErrorItem(
            loc=["body"],
            msg="text holds characters that cannot be stored (NUL or lone surrogates)",
            type="value_error",
        )
        return JSONResponse(_body([item]), status_code=422)

    @app.exception_handler(OperationalError)
    @app.exception_handler(PoolTimeout)
    async def _store_down(_: Request, exc: Exception) -> JSONResponse:
        log.warning("PostgreSQL is unreachable: %s", type(exc).__name__)
        item = ErrorItem(loc=["postgres"], msg="the store (PostgreSQL) is unreachable", type="down")
        return JSONResponse(_body([item]), status_code=503)
