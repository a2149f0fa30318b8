"""Workflow files read as GitHub reads them: YAML 1.2 core schema, so `yes` and `on` stay text.

PyYAML implements YAML 1.1, where `INTEG_TESTS: yes` is True and the `on:` key is True too.
This loader keeps PyYAML's parser but resolves plain scalars by the 1.2 core schema only.
"""

from __future__ import annotations

import re
from typing import Any

import yaml


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema's implicit types (null, bool, int, float)."""


_Yaml12Loader.yaml_implicit_resolvers = {}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # 1.2: a leading zero is decimal, not octal


_Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def load_yaml(text: str) -> Any:
    """One YAML document as the 1.2 core schema reads it; raises yaml.YAMLError when malformed."""
    return yaml.load(text, Loader=_Yaml12Loader)
