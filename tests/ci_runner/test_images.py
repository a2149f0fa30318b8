"""Image tags follow their recipe: a change rebuilds, no change reuses."""

import pytest

from ci_runner.errors import ImageError
from ci_runner.images import LANGUAGES, recipe_for


def test_tag_changes_with_the_base_and_the_recipe() -> None:
    recipe = recipe_for("python", "arena/base:bookworm")
    assert recipe.tag("sha256:aaa") == recipe.tag("sha256:aaa")
    assert recipe.tag("sha256:aaa") != recipe.tag("sha256:bbb")
    other = recipe_for("python", "debian:bookworm-slim")
    assert other.tag("sha256:aaa") != recipe.tag("sha256:aaa")
    assert recipe.tag("sha256:aaa").startswith("arena/ci-python:")


def test_every_language_has_git_and_its_toolchain() -> None:
    wanted = {"python": "python3-pytest", "go": "golang-go", "rust": "cargo", "cpp": "cmake"}
    for language in LANGUAGES:
        dockerfile = recipe_for(language, "base").dockerfile
        assert " git " in dockerfile and wanted[language] in dockerfile


def test_unknown_language_is_refused() -> None:
    with pytest.raises(ImageError, match="unknown language 'cobol'"):
        recipe_for("cobol", "base")


def test_built_images_run_as_a_user_with_a_home(images: dict[str, str]) -> None:
    assert set(images) == set(LANGUAGES)
