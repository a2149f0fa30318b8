"""The names of the images Arena builds, made here and nowhere else: a run may use only these
(a task naming another image would have the engine pull and run whatever it names).

Apart from `ci_runner.images` so that reading a task file can check an image name without
loading the Docker client.
"""

from __future__ import annotations

import re

from ci_runner.errors import ImageError
from ci_runner.languages import LANGUAGES

_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"  # Docker's grammar of a tag
_ARENA_IMAGE = re.compile(
    rf"arena/(?:(?:ci|env)-(?:{'|'.join(map(re.escape, LANGUAGES))})|base):{_TAG}"
)
ARENA_IMAGE_FORMS = "arena/ci-<language>:<tag>, arena/env-<language>:<tag> or arena/base:<suite>"


def ci_image_name(language: str, tag: str) -> str:
    """A language's CI image (`ImageBuilder.ensure`, `ensure_toolchain`)."""
    return _arena_name(f"arena/ci-{language}:{tag}")


def env_image_name(language: str, tag: str) -> str:
    """A task's environment image (`ci_runner.environments`)."""
    return _arena_name(f"arena/env-{language}:{tag}")


def base_image_name(suite: str) -> str:
    """The debootstrapped base of a Debian suite."""
    return _arena_name(f"arena/base:{suite}")


def is_arena_image(name: str) -> bool:
    return _ARENA_IMAGE.fullmatch(name) is not None


class ForeignImage(ValueError):
    """An image name Arena did not make: refused wherever an image can be named."""


def require_arena_image(name: str) -> str:
    """`name` if it is one of Arena's own image names; ForeignImage saying which forms are."""
    if not is_arena_image(name):
        raise ForeignImage(
            f"{name[:200]!r} is not an image Arena builds ({ARENA_IMAGE_FORMS}); only those are run"
        )
    return name


def _arena_name(name: str) -> str:
    if not is_arena_image(name):  # a language or suite the grammar does not take
        raise ImageError(f"{name!r} is not a name Arena's images can have ({ARENA_IMAGE_FORMS})")
    return name
