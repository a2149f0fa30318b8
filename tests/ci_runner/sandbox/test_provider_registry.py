"""The provider registry loads a provider's SDK only when a setting names that provider: a
second provider (Kubernetes, a remote engine) is added by one registry line and runs without
Docker's client ever imported. Each check runs in a fresh interpreter, since this one has
long imported Docker for other tests."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ci_runner import CIError, CISettings
from ci_runner.providers import PROVIDERS, provider_factory

ROOT = Path(__file__).resolve().parents[3]

# a provider that is no engine at all: enough to be named, built and asked (the conformance
# suites, parametrized over the registry, ask a real one for the rest of the interface)
FAKE_PROVIDER = """
class Fake:
    name = "fake"

    def __init__(self, settings, client=None):
        self.settings, self.client = settings, client

    def unreachable(self, timeout_s):
        return "a provider of this test: nothing to reach"
"""


def _fresh(code: str, tmp_path: Path) -> dict[str, object]:
    """What `code` (which sets `shown`) shows, run in a new interpreter beside the fake."""
    (tmp_path / "fake_provider.py").write_text(FAKE_PROVIDER)
    script = "import json, sys\n" + textwrap.dedent(code) + "\nprint(json.dumps(shown))\n"
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT}:{tmp_path}", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout.splitlines()[-1])
    assert isinstance(shown, dict)
    return shown


def test_the_runner_and_the_registry_load_no_providers_sdk(tmp_path: Path) -> None:
    shown = _fresh(
        """
        import ci_runner.runner, ci_runner.providers, ci_runner.sandbox
        from ci_runner.sandbox import Sandbox, SandboxDied
        shown = {"docker": "docker" in sys.modules}
        """,
        tmp_path,
    )
    assert shown == {"docker": False}


def test_a_provider_named_by_the_settings_is_the_only_one_loaded(tmp_path: Path) -> None:
    shown = _fresh(
        """
        from ci_runner import CISettings
        from ci_runner.providers import PROVIDERS, provider_for
        PROVIDERS["fake"] = "fake_provider:Fake"
        provider = provider_for(CISettings(sandbox_provider="fake"), client="engine")
        shown = {
            "name": provider.name,
            "client": provider.client,
            "why": provider.unreachable(1),
            "docker": "docker" in sys.modules,
        }
        """,
        tmp_path,
    )
    assert shown == {
        "name": "fake",
        "client": "engine",
        "why": "a provider of this test: nothing to reach",
        "docker": False,
    }


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_each_registered_provider_answers_to_its_name(name: str) -> None:
    assert provider_factory(name).name == name  # type: ignore[attr-defined]


def test_an_unknown_provider_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    from ci_runner.providers import provider_for

    with pytest.raises(CIError, match=r"unknown sandbox provider 'nomad' .*known: docker"):
        provider_for(CISettings(cache_dir=tmp_path, sandbox_provider="nomad"))
