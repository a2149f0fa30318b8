"""Packages whose names load on first use (`ci_runner.lazy`) export what they say, and no name
is hidden by a submodule of the same name: once anything imports that submodule, Python binds
the package attribute to the module and `__getattr__` is never asked again, so which object a
caller gets would depend on import order (a function one run, a module the next)."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

LAZY_PACKAGES = ["ci_runner", "ci_runner.sandbox", "arena.ratings"]


def _homes(package: ModuleType) -> dict[str, str]:
    homes = vars(package)["_HOMES"]
    assert isinstance(homes, dict)
    return homes


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_lazy_name_is_exported_and_found_in_its_home(name: str) -> None:
    package = importlib.import_module(name)
    homes = _homes(package)
    assert sorted(package.__all__) == sorted(homes)
    for attribute, home in homes.items():
        assert hasattr(importlib.import_module(home), attribute), f"{home} has no {attribute}"
        assert getattr(package, attribute) is getattr(importlib.import_module(home), attribute)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_no_lazy_name_is_also_a_submodule(name: str) -> None:
    package = importlib.import_module(name)
    submodules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert sorted(set(_homes(package)) & submodules) == []


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    package = importlib.import_module("arena.ratings")
    with pytest.raises(AttributeError, match=r"'arena\.ratings' has no attribute 'no_such_name'"):
        package.no_such_name  # noqa: B018
