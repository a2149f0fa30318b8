"""What every provider's image store must do; each registered provider runs this module.

As the sandbox suite beside it: parametrized over ci_runner.providers.PROVIDERS, so a provider
added there runs it with no change here. Images are tiny ones built from the offline base,
labelled with this test's own name, and removed again.
"""

from __future__ import annotations

import io
import re
import tarfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from ci_runner import CISettings, Limits
from ci_runner.errors import ImageError
from ci_runner.images import ImageBuilder
from ci_runner.providers import PROVIDERS, provider_for
from ci_runner.sandbox.image_store import ImageStore, build_context
from ci_runner.sandbox.provider import SandboxProvider


@pytest.fixture(params=sorted(PROVIDERS))
def provider(
    request: pytest.FixtureRequest, docker_client: docker.DockerClient, ci_settings: CISettings
) -> SandboxProvider:
    return provider_for(ci_settings.model_copy(update={"sandbox_provider": request.param}))


@pytest.fixture
def tag(provider: SandboxProvider) -> Iterator[str]:
    """A fresh tag, removed (if anything made it) when the test ends."""
    name = f"arena/test-store:{uuid.uuid4().hex[:12]}"
    yield name
    provider.images.remove(name)


def _base(provider: SandboxProvider, settings: CISettings) -> str:
    ImageBuilder(provider, settings).ensure_base()
    return settings.base_image


def test_a_missing_image_has_no_id_and_a_build_makes_one_with_its_labels(
    provider: SandboxProvider, ci_settings: CISettings, tag: str
) -> None:
    store: ImageStore = provider.images
    assert store.image_id(tag) is None
    dockerfile = f"FROM {_base(provider, ci_settings)}\nCOPY note /note\nRUN cat /note\n"
    context = build_context(dockerfile, {"note": ("built by the store suite\n", 0o644)})
    lines = list(store.build(tag, context, {"arena.test": "store"}))
    assert any("built by the store suite" in line for line in lines)  # the log, as it came
    found = store.image_id(tag)
    assert found is not None and found.startswith("sha256:")
    (image,) = [i for i in store.usage().images if tag in i.tags]
    assert image.labels["arena.test"] == "store"
    assert image.size_bytes > 0


def test_a_failed_build_raises_with_the_tail_of_its_log_and_leaves_no_image(
    provider: SandboxProvider, ci_settings: CISettings, tag: str
) -> None:
    base = _base(provider, ci_settings)
    context = build_context(f"FROM {base}\nRUN echo the-last-words && exit 3\n")
    with pytest.raises(ImageError, match=r"(?s)building .* failed.*the-last-words"):
        list(provider.images.build(tag, context, {}))
    assert provider.images.image_id(tag) is None


def test_an_image_a_sandbox_uses_is_kept_and_removed_once_it_is_free(
    provider: SandboxProvider, ci_settings: CISettings, tag: str
) -> None:
    base = _base(provider, ci_settings)
    list(provider.images.build(tag, build_context(f'FROM {base}\nCMD ["bash"]\n'), {}))
    box = provider.start(tag, Limits(disk_mb=64))
    try:
        assert provider.images.remove(tag) is False
        assert provider.images.image_id(tag) is not None
    finally:
        box.close()
    assert provider.images.remove(tag) is True
    assert provider.images.image_id(tag) is None
    assert provider.images.remove(tag) is True  # already gone: nothing to do


def test_a_root_file_system_is_imported_as_an_image(
    provider: SandboxProvider, tag: str, tmp_path: Path
) -> None:
    tarball = tmp_path / "root.tar"
    with tarfile.open(tarball, "w") as tar:
        data = b"imported\n"
        info = tarfile.TarInfo("etc/arena-note")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    provider.images.import_rootfs(tarball, tag)
    assert provider.images.image_id(tag) is not None


def test_a_pull_from_a_registry_that_does_not_answer_is_an_image_error(
    provider: SandboxProvider,
) -> None:
    with pytest.raises(ImageError, match=re.escape("127.0.0.1:9/arena/none")):
        provider.images.pull("127.0.0.1:9/arena/none:latest")


def test_usage_names_the_data_root(provider: SandboxProvider) -> None:
    usage = provider.images.usage()
    assert usage.data_root
    assert usage.free_bytes is None or usage.free_bytes > 0


def test_usage_asked_by_several_clients_at_once_waits_its_turn(provider: SandboxProvider) -> None:
    """Two workers, or a build beside `arena tasks gc`, ask at once; an engine may answer one at
    a time (Docker refuses the others with 500): every caller gets its answer."""
    failures: list[str] = []

    def ask() -> None:
        try:
            provider.images.usage()
        except ImageError as exc:
            failures.append(str(exc))

    callers = [threading.Thread(target=ask) for _ in range(3)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(timeout=600)
    assert not failures, failures[:2]
