"""Generated requests from the OpenAPI schema, with the admin token: none may make a 5xx.

The health check (503 is its answer when no worker runs) and the live event stream are left
out; `check` is turned off so no generated URL or repo is ever contacted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import positive_data_acceptance

from api.core.config import ApiSettings
from api.main import create_app
from ci_runner import CISettings
from tests.api.conftest import ADMIN
from tests.api.live import serving


@pytest.fixture
def live_url(api_settings: ApiSettings, ci_settings: CISettings) -> Iterator[str]:
    with serving(create_app(api_settings, ci_settings)) as url:
        yield url


def test_no_generated_request_makes_the_server_fail(live_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{live_url}/api/openapi.json").exclude(
        path_regex=r"/events$|/health$"
    )
    failures, labels = [], []
    for found in schema.get_all_operations():
        operation = found.ok()
        labels.append(operation.label)

        @given(case=operation.as_strategy())
        @settings(
            max_examples=25,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def check(case: schemathesis.Case) -> None:
            if case.query and "check" in case.query:
                case.query["check"] = False
            if case.path == "/api/tasks/import":
                case.query = {**(case.query or {}), "check": False}
            # a refusal with a 4xx is fine (unknown names, text PostgreSQL cannot keep)
            case.call_and_validate(headers=ADMIN, excluded_checks=[positive_data_acceptance])

        try:
            check()
        except Exception as exc:
            failures.append(f"{operation.label}: {exc}")
    assert len(labels) == 20, labels  # every route but /events and /health
    assert not failures, "\n\n".join(failures)
