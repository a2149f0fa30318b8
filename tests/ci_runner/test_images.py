"""Image tags follow their recipe: a change rebuilds, no change reuses."""

import pytest

from ci_runner.errors import ImageError
from ci_runner.image_names import (
    ForeignImage,
    base_image_name,
    ci_image_name,
    env_image_name,
    is_arena_image,
    require_arena_image,
)
from ci_runner.images import (
    LANGUAGES,
    recipe_for,
)
from ci_runner.languages import profile_of
from ci_runner.toolchains import toolchain_choice


def test_tag_changes_with_the_base_and_the_recipe() -> None:
    recipe = recipe_for("python", "arena/base:bookworm")
    assert recipe.tag("sha256:aaa") == recipe.tag("sha256:aaa")
    assert recipe.tag("sha256:aaa") != recipe.tag("sha256:bbb")
    other = recipe_for("python", "debian:bookworm-slim")
    assert other.tag("sha256:aaa") != recipe.tag("sha256:aaa")
    assert recipe.tag("sha256:aaa").startswith("arena/ci-python:")


def test_every_language_has_git_and_its_toolchain() -> None:
    for language in LANGUAGES:
        dockerfile = recipe_for(language, "base").dockerfile
        assert " git " in dockerfile
        assert all(package in dockerfile for package in profile_of(language).packages), language


def test_unknown_language_is_refused() -> None:
    with pytest.raises(ImageError, match="unknown language 'cobol'"):
        recipe_for("cobol", "base")


def test_built_images_run_as_a_user_with_a_home(images: dict[str, str]) -> None:
    assert set(images) == set(LANGUAGES)


def test_a_toolchain_choice_adds_its_packages_shims_and_variables() -> None:
    plain = recipe_for("python", "base")
    assert recipe_for("python", "base", toolchain_choice("python", "3.11", {})) == plain
    deviating = recipe_for("python", "base", toolchain_choice("python", "3.12", {})).dockerfile
    assert "RUN ln -sf /usr/bin/python3.13 /usr/local/bin/python3.12" in deviating
    assert 'ENV TOX_SKIP_MISSING_INTERPRETERS="false" NOXFORCEPYTHON="3.13"' in deviating
    clang = recipe_for("cpp", "base", toolchain_choice("cpp", "clang", {})).dockerfile
    assert " clang " in clang and 'CC="clang"' in clang


def test_an_official_image_brings_its_own_toolchain() -> None:
    choice = toolchain_choice("go", "1.22", {}, registry="mirror.example")
    assert choice.image is not None
    dockerfile = recipe_for("go", choice.image, choice).dockerfile
    assert dockerfile.startswith("FROM mirror.example/golang:1.22.12-bookworm\n")
    assert "golang-go" not in dockerfile


def test_only_the_names_arena_makes_are_its_own() -> None:
    made = [
        recipe_for("go", "arena/base:bookworm").tag("sha256:aaa"),
        ci_image_name("go", "0123456789ab-go1.22.5"),
        env_image_name("rust", "0123456789abcdef"),
        base_image_name("trixie"),
    ]
    assert all(is_arena_image(name) and require_arena_image(name) == name for name in made)
    for foreign in (
        "evil/miner:latest",
        "arena/ci-python",  # no tag: Docker would take :latest, which Arena never builds
        "arena/ci-cobol:abc",
        "arena/service-postgres:abc",  # a job's service, never a run's image
        "localhost:5000/arena/ci-python:abc",
        "arena/ci-python:abc@sha256:" + "0" * 64,
        "arena/ci-python:abc\n",
    ):
        assert not is_arena_image(foreign)
        with pytest.raises(ForeignImage, match="is not an image Arena builds"):
            require_arena_image(foreign)
    with pytest.raises(ImageError, match="not a name Arena's images can have"):
        ci_image_name("cobol", "abc")
