"""Packages as of the task's date: the cutoff, the date-cut index pages, the image key."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from ci_runner.environments import EnvironmentSpec
from ci_runner.package_dates import normalize_cutoff, resolution_env
from ci_runner.timemachine_index import cut, cut_crate, parse_time, to_html
from tests.ci_runner.env_projects import python_pipeline


@pytest.mark.parametrize(
    ("as_of", "cutoff"),
    [
        ("2024-03-05", "2024-03-05T23:59:59Z"),  # a bare date: what was out by that evening
        ("2024-03-05T10:11:12Z", "2024-03-05T10:11:12Z"),
        ("2024-03-05T10:11:12+02:00", "2024-03-05T08:11:12Z"),
        ("2024-03-05T10:11:12", "2024-03-05T10:11:12Z"),
    ],
)
def test_the_cutoff_is_a_utc_time(as_of: str, cutoff: str) -> None:
    assert normalize_cutoff(as_of) == cutoff


def test_a_bad_date_is_refused() -> None:
    with pytest.raises(ValueError, match="ISO date"):
        EnvironmentSpec(
            repo="/r", commit="a" * 40, language="python", pipeline=python_pipeline(), as_of="x"
        )


PAGE = {
    "meta": {"api-version": "1.1"},
    "name": "six",
    "versions": ["1.15.0", "1.16.0", "1.17.0"],
    "files": [
        {
            "filename": f"six-{version}-py2.py3-none-any.whl",
            "url": f"https://files.example/six-{version}-py2.py3-none-any.whl",
            "hashes": {"sha256": "ab" * 32},
            "requires-python": ">=2.7, !=3.0.*",
            "upload-time": uploaded,
            "yanked": False,
            "core-metadata": {"sha256": "cd" * 32},
        }
        for version, uploaded in (
            ("1.15.0", "2020-05-21T08:18:24.012Z"),
            ("1.16.0", "2021-05-05T14:18:17.950Z"),
            ("1.17.0", "2024-12-04T17:35:26Z"),
        )
    ],
}


def test_the_index_leaves_out_what_was_uploaded_after_the_cutoff() -> None:
    page = cut(PAGE, parse_time("2023-06-01T00:00:00Z"))
    assert page["versions"] == ["1.15.0", "1.16.0"]
    assert [f["filename"].split("-")[1] for f in page["files"]] == ["1.15.0", "1.16.0"]
    assert cut(PAGE, datetime(2025, 1, 1, tzinfo=UTC))["versions"] == PAGE["versions"]


def test_the_html_page_carries_what_pip_reads() -> None:
    html = to_html(cut(PAGE, parse_time("2021-01-01T00:00:00Z")))
    assert html.count("<a ") == 1
    assert f'six-1.15.0-py2.py3-none-any.whl#sha256={"ab" * 32}"' in html
    assert 'data-requires-python="&gt;=2.7, !=3.0.*"' in html
    assert f'data-core-metadata="sha256={"cd" * 32}"' in html


def test_pip_goes_through_the_index_and_uv_and_npm_are_told_the_date() -> None:
    env = resolution_env("2023-06-01T00:00:00Z", 4321)
    assert env["PIP_INDEX_URL"] == "http://127.0.0.1:4321/simple"
    assert env["UV_EXCLUDE_NEWER"] == env["npm_config_before"] == "2023-06-01T00:00:00Z"
    assert "PIP_INDEX_URL" not in resolution_env("2023-06-01T00:00:00Z", None)
    assert env["ARENA_CRATES_INDEX"] == "sparse+http://127.0.0.1:4321/crates/"


CRATE = "".join(
    json.dumps({"name": "itoa", "vers": version, "deps": [], **published}) + "\n"
    for version, published in (
        ("0.4.8", {}),  # an entry without a publication time is kept
        ("1.0.1", {"pubtime": "2021-12-12T20:07:27Z"}),
        ("1.0.2", {"pubtime": "2022-05-15T21:10:07Z"}),
    )
)


def test_the_crates_index_leaves_out_versions_published_after_the_cutoff() -> None:
    kept = cut_crate(CRATE, parse_time("2022-01-01T23:59:59Z"))
    assert [json.loads(line)["vers"] for line in kept.splitlines()] == ["0.4.8", "1.0.1"]
    assert cut_crate(CRATE, parse_time("2023-01-01T00:00:00Z")) == CRATE
    assert cut_crate(CRATE.splitlines()[2] + "\n", parse_time("2022-01-01T00:00:00Z")) == ""


def test_the_date_is_part_of_the_image_key() -> None:
    spec = EnvironmentSpec(
        repo="/r", commit="a" * 40, language="python", pipeline=python_pipeline()
    )
    dated = spec.model_copy(update={"as_of": normalize_cutoff("2023-06-01")})
    later = spec.model_copy(update={"as_of": normalize_cutoff("2024-06-01")})
    assert len({spec.key("sha256:1"), dated.key("sha256:1"), later.key("sha256:1")}) == 3
