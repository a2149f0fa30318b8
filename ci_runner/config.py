"""Settings of the CI runner, read once from `ARENA_*` variables and passed in."""

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from ci_runner.types import Limits


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "arena"


class CISettings(BaseSettings):
    """Where caches live, which base image the CI images grow from, default limits."""

    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore")

    cache_dir: Path = Field(default_factory=_default_cache_dir)
    base_image: str = "arena/base:bookworm"
    debian_mirror: str = "http://deb.debian.org/debian"
    debian_suite: str = "bookworm"
    limits: Limits = Field(default_factory=Limits)

    @property
    def mirrors_dir(self) -> Path:
        return self.cache_dir / "mirrors"

    @property
    def runs_dir(self) -> Path:
        return self.cache_dir / "runs"
