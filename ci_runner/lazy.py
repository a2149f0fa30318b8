"""Package attributes loaded on first use (PEP 562), for packages whose `__init__` names what
their submodules define: importing one light submodule must not load every heavy one (the
Docker client, scipy), which every `arena` command and every service process would pay for.

The package also imports the names under `TYPE_CHECKING`, so type checkers see them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """A module `__getattr__` taking each name in `homes` from the module named beside it."""

    def attribute(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    return attribute
