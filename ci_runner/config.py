"""Settings of the CI runner, read once from `ARENA_*` variables and passed in."""

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ci_runner.git_mirrors import GitMirrors
from ci_runner.types import Limits


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "arena"


# proxy and package-index variables an environment build inherits; never a CI run
BUILD_PASSTHROUGH = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "UV_INDEX_URL",
    "GOPROXY",
    "GONOSUMDB",
    "GOPRIVATE",
    "CARGO_REGISTRIES_CRATES_IO_PROTOCOL",
)


def _build_passthrough() -> dict[str, str]:
    return {name: os.environ[name] for name in BUILD_PASSTHROUGH if os.environ.get(name)}


class CISettings(BaseSettings):
    """Where caches live, which base image the CI images grow from, default limits."""

    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore")

    cache_dir: Path = Field(default_factory=_default_cache_dir)
    base_image: str = "arena/base:bookworm"
    debian_mirror: str = "http://deb.debian.org/debian"
    debian_suite: str = "bookworm"
    # a registry (or mirror) of official images: toolchains come from REGISTRY/python:3.12-
    # bookworm, golang:1.22.5-bookworm, rust:1.79-bookworm, gcc:13 instead of Debian suites
    toolchain_registry: str | None = None
    limits: Limits = Field(default_factory=Limits)
    # environment image builds only (setup steps, with network); CI runs never see these
    build_network: str = Field(default="bridge", min_length=1)
    build_ca_bundle: Path | None = None
    # memory of an environment build box, its in-memory scratch folders included: setup steps and
    # warm-ups compile (cargo, C++), so more than a run's; a build past it fails, the host stays
    build_memory_mb: int = Field(default=6144, ge=256)
    # what a build box may write outside its scratch folders (packages, toolchains, caches:
    # what becomes the environment image); a build past it fails, the host's disk stays
    build_disk_mb: int = Field(default=20480, ge=256)
    build_env: dict[str, str] = Field(default_factory=_build_passthrough)
    # the conda channel asked, when a leg needs conda, whether this machine could reach one
    conda_channel: str = Field(default="https://conda.anaconda.org/conda-forge", min_length=1)
    # job legs validated per task, best-ranked first, before it is called invalid
    max_legs_tried: int = Field(default=3, ge=1)
    # where repos are fetched from: `owner/name` or URL prefix -> local path or Git URL
    git_mirrors: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict)
    # history fetched with a task's commit: 1 is the commit alone (its tree, enough to build and
    # test), 0 the commit's whole ancestry (for builds that read tags, `git describe`)
    fetch_depth: int = Field(default=1, ge=0)
    # a fetch of a task's repo that takes longer is given up, its host called unreachable
    # (a transfer that stalls for two minutes is given up sooner)
    fetch_timeout_s: float = Field(default=3600, gt=0)
    # where sandboxes come from: a name in ci_runner.providers.PROVIDERS
    sandbox_provider: str = Field(default="docker", min_length=1)

    @field_validator("git_mirrors", mode="before")
    @classmethod
    def _mirror_rules(cls, value: Any) -> Any:
        """A JSON object, or `FROM=TO` rules separated by commas or whitespace."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text.startswith("{"):
            return json.loads(text)
        rules = GitMirrors.parse(p for p in text.replace(",", " ").split() if p)
        return dict(rules.rules)

    def mirror_rules(self) -> GitMirrors:
        return GitMirrors.of(self.git_mirrors)

    # environment builds resolve packages (PyPI, npm) as of the task's date, when it has one
    package_date_cut: bool = True
    # a task's environment is built on the image of an earlier task of its repository (same
    # language and toolchain) where its language allows, adding only what its commit changes
    env_layers: bool = True
    # the index the date-cut PyPI index reads (PEP 691 JSON with upload times)
    package_index_url: str = Field(default="https://pypi.org/simple", min_length=1)
    # crates.io's sparse index, which the date-cut index serves as of a task's date
    crates_index_url: str = Field(default="https://index.crates.io", min_length=1)
    # memory of each `services:` container (PostgreSQL, MySQL, Redis) beside a job
    service_memory_mb: int = Field(default=1024, ge=128)

    @property
    def mirrors_dir(self) -> Path:
        return self.cache_dir / "mirrors"

    @property
    def runs_dir(self) -> Path:
        return self.cache_dir / "runs"

    @property
    def environments_dir(self) -> Path:
        return self.cache_dir / "environments"
