"""Environment images on disk: their sizes as the engine counts them, and the estimate of what
a batch of builds will add (each missing image once, each build at a measured or typical
layer size)."""

from __future__ import annotations

from ci_runner.environments import (
    MB,
    TYPICAL_IMAGE_MB,
    EnvironmentImage,
    MissingImage,
    PlannedBuild,
    disk_estimate,
    environment_images,
)
from ci_runner.languages import profile_of
from ci_runner.sandbox.image_store import StoredImage


def _image(tags: list[str], size: int, shared: int | None, language: str = "go") -> StoredImage:
    return StoredImage(tuple(tags), {"arena.env": language, "arena.image": language}, size, shared)


def test_only_labelled_environment_images_are_listed_with_their_own_layers() -> None:
    found = environment_images(
        [
            _image(["arena/env-go:aaa"], 1200 * MB, 1180 * MB),
            StoredImage(("arena/ci-go:x",), {}, 950 * MB, 0),
            StoredImage((), {}, 1, 0),  # dangling
        ]
    )
    assert found == (EnvironmentImage("arena/env-go:aaa", "go", 1200 * MB, 20 * MB, 0),)


def test_an_image_with_two_tags_frees_its_layers_once() -> None:
    found = environment_images([_image(["arena/env-go:b", "arena/env-go:a"], 10, 4)])
    assert [(i.tag, i.own_bytes) for i in found] == [("arena/env-go:a", 0), ("arena/env-go:b", 6)]


def test_a_shared_size_the_engine_did_not_compute_counts_the_whole_image() -> None:
    (found,) = environment_images([_image(["arena/env-go:a"], 10, None)])
    assert found.own_bytes == 10


def test_each_missing_image_counts_once_and_each_build_at_the_median_built_here() -> None:
    trixie = MissingImage("base", "arena/base:trixie")
    planned = [
        PlannedBuild("python", (trixie, MissingImage("language", "python image (trixie)"))),
        PlannedBuild("python", (trixie, MissingImage("language", "python image (trixie)"))),
        PlannedBuild("go", (MissingImage("go", "Go 1.20.14"),)),
    ]
    built = [
        EnvironmentImage("arena/env-python:1", "python", 0, 100 * MB, 0),
        EnvironmentImage("arena/env-python:2", "python", 0, 300 * MB, 0),
        EnvironmentImage("arena/env-python:3", "python", 0, 200 * MB, 0),
    ]
    estimate = disk_estimate(planned, built, free_bytes=5_000 * MB)
    toolchains = TYPICAL_IMAGE_MB["base"] + profile_of("python").typical_image_mb
    toolchains += TYPICAL_IMAGE_MB["go-release"]
    assert estimate.toolchain_bytes == toolchains * MB
    assert estimate.toolchains == ("arena/base:trixie", "python image (trixie)", "Go 1.20.14")
    assert estimate.environment_bytes == (2 * 200 + profile_of("go").typical_env_layer_mb) * MB
    assert estimate.builds == {"python": 2, "go": 1}
    text = "\n".join(estimate.lines())
    assert "median own layer of 3 built here" in text
    assert "a typical go environment layer" in text
    assert "estimate" in text and "5.0 GB" in text


def test_a_remote_engines_free_space_is_unknown_and_nothing_to_build_says_so() -> None:
    estimate = disk_estimate([PlannedBuild("rust")], [], free_bytes=None)
    assert estimate.total_bytes == profile_of("rust").typical_env_layer_mb * MB
    assert any("unknown" in line for line in estimate.lines())
    assert disk_estimate([], [], None).lines() == ["disk estimate: nothing to build"]
