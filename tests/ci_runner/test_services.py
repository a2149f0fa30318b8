"""A job's `services:` containers: which image stands in, and reachable from the job only."""

from __future__ import annotations

import docker
import pytest

from ci_runner import CIRequest, CIRunner, CIStatus, Pipeline
from ci_runner.pipeline import Service
from ci_runner.services import ServiceError, kind_of, service_port
from tests.conftest import MakeRepo, our_containers


@pytest.mark.parametrize(
    ("image", "kind"),
    [
        ("postgres:12", "postgres"),
        ("postgres", "postgres"),
        ("docker.io/library/postgres:16-alpine", "postgres"),
        ("bitnami/postgresql:15", "postgres"),
        ("mysql:8.0", "mariadb"),
        ("mariadb:10.5", "mariadb"),
        ("redis:7-alpine", "redis"),
        ("memcached:1.6", "memcached"),
    ],
)
def test_a_service_image_has_a_debian_stand_in(image: str, kind: str) -> None:
    assert kind_of(image).name == kind


def test_an_image_without_a_stand_in_is_a_clear_error() -> None:
    with pytest.raises(ServiceError, match="cannot run offline"):
        kind_of("mongo:6")


def test_githubs_ports_say_where_the_job_reaches_the_service() -> None:
    pipeline = Pipeline.model_validate(
        {
            "steps": [{"name": "t", "run": "true"}],
            "report": {"format": "junit", "path": "r.xml"},
            "services": {
                "db": {"image": "postgres:12", "ports": ["5433:5432"]},
                "cache": {"image": "redis", "ports": [6379]},
                "other": {"image": "mysql:8"},
            },
        }
    )
    db, cache, other = (pipeline.services[n] for n in ("db", "cache", "other"))
    assert service_port(db, kind_of(db.image)) == 5433
    assert service_port(cache, kind_of(cache.image)) == 6379
    assert service_port(other, kind_of(other.image)) == 3306
    assert Pipeline.model_validate_json(pipeline.model_dump_json()) == pipeline


def test_a_pipeline_without_services_dumps_as_before() -> None:
    pipeline = Pipeline.model_validate(
        {"steps": [{"name": "t", "run": "true"}], "report": {"format": "junit", "path": "r.xml"}}
    )
    assert "services" not in pipeline.model_dump()


_PING = (
    "exec 3<>/dev/tcp/127.0.0.1/16379; printf 'PING\\r\\n' >&3; read -r line <&3; "
    'echo "$line"; test "$line" = "+PONG$(printf \'\\r\')"'
)


def test_a_service_is_reachable_from_the_job_and_nothing_else_is(
    runner: CIRunner,
    images: dict[str, str],
    make_repo: MakeRepo,
    docker_client: docker.DockerClient,
) -> None:
    repo, commit = make_repo({"README": "x\n"})
    pipeline = Pipeline.model_validate(
        {
            "services": {"cache": {"image": "redis:7", "ports": ["16379:6379"]}},
            "steps": [
                {"name": "loopback only", "run": 'test "$(ls /sys/class/net)" = lo'},
                {"name": "service", "run": _PING},
                {
                    "name": "no way out",
                    "run": "! timeout 5 bash -c ': > /dev/tcp/1.1.1.1/80' 2>/dev/null",
                },
                {"name": "report", "run": "echo 'test reach ... ok'"},
            ],
            "report": {"format": "libtest", "step": "report"},
        }
    )
    before = set(our_containers(docker_client))
    request = CIRequest(repo=repo, commit=commit, pipeline=pipeline, image=images["python"])
    result = runner.run(request)
    assert result.status is CIStatus.PASSED, [(s.name, s.log[-500:]) for s in result.steps]
    assert "+PONG" in result.steps[1].log
    assert set(our_containers(docker_client)) == before  # the service went with the run


def test_a_service_that_cannot_start_is_the_runs_error_with_its_words(
    runner: CIRunner, images: dict[str, str], make_repo: MakeRepo
) -> None:
    repo, commit = make_repo({"README": "x\n"})
    pipeline = Pipeline.model_validate(
        {
            "services": {"db": Service(image="postgres:12").model_dump()},  # no password
            "steps": [{"name": "t", "run": "echo 'test x ... ok'"}],
            "report": {"format": "libtest", "step": "t"},
        }
    )
    request = CIRequest(repo=repo, commit=commit, pipeline=pipeline, image=images["python"])
    result = runner.run(request)
    assert result.status is CIStatus.ERROR and result.steps == ()
    assert result.error is not None and "superuser password is not specified" in result.error
