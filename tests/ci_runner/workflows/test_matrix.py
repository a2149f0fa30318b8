"""Matrix expansion with include/exclude, and the YAML 1.2 reading GitHub does."""

from __future__ import annotations

import pytest

from ci_runner.workflows.expressions import Unsupported
from ci_runner.workflows.matrix import expand_matrix, leg_values_text
from ci_runner.workflows.yaml12 import load_yaml


def test_include_and_exclude_follow_githubs_documented_example() -> None:
    strategy = load_yaml(
        """
        matrix:
          fruit: [apple, pear]
          animal: [cat, dog]
          include:
            - color: green
            - color: pink
              animal: cat
            - fruit: apple
              shape: circle
            - fruit: banana
            - fruit: banana
              animal: cat
        """
    )
    assert expand_matrix(strategy) == [
        {"fruit": "apple", "animal": "cat", "color": "pink", "shape": "circle"},
        {"fruit": "apple", "animal": "dog", "color": "green", "shape": "circle"},
        {"fruit": "pear", "animal": "cat", "color": "pink"},
        {"fruit": "pear", "animal": "dog", "color": "green"},
        {"fruit": "banana"},
        {"fruit": "banana", "animal": "cat"},
    ]


def test_exclude_removes_partial_matches_and_names_list_the_values() -> None:
    strategy = load_yaml(
        "matrix: {os: [ubuntu-latest, windows-latest], python: ['3.11', 3.12],"
        " exclude: [{os: windows-latest, python: 3.12}]}"
    )
    legs = expand_matrix(strategy)
    assert [leg_values_text(leg) for leg in legs] == [
        "ubuntu-latest, 3.11",
        "ubuntu-latest, 3.12",
        "windows-latest, 3.11",
    ]
    assert expand_matrix(None) == [{}] and expand_matrix({"matrix": {}}) == [{}]


def test_a_matrix_computed_by_an_expression_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="expression"):
        expand_matrix({"matrix": "${{ fromJSON(needs.setup.outputs.matrix) }}"})


def test_axes_entries_and_whole_matrices_computed_from_known_contexts_expand() -> None:
    contexts = {"inputs": {"target-platform": "linux", "pythons": '["3.11", "3.12"]'}}
    axis = load_yaml(
        "matrix:\n  build-type: ${{ inputs.target-platform == 'macos' && "
        'fromJSON(\'["darwin","mas"]\') || fromJSON(\'["linux"]\') }}\n'
        "  shard: [1, 2]\n"
    )
    axis["matrix"]["include"] = '${{ fromJSON(\'[{"shard": 2, "slow": true}]\') }}'
    assert expand_matrix(axis, contexts) == [
        {"build-type": "linux", "shard": 1},
        {"build-type": "linux", "shard": 2, "slow": True},
    ]
    whole = {"matrix": "${{ fromJSON(format('{{\"python\": {0}}}', inputs.pythons)) }}"}
    assert expand_matrix(whole, contexts) == [{"python": "3.11"}, {"python": "3.12"}]
    inline = {"matrix": {"python": ["${{ inputs.target-platform }}-3.12", 3.13]}}
    assert expand_matrix(inline, contexts) == [{"python": "linux-3.12"}, {"python": 3.13}]


def test_a_matrix_from_another_jobs_outputs_or_malformed_is_unsupported_not_an_error() -> None:
    with pytest.raises(Unsupported, match="needs"):
        expand_matrix({"matrix": "${{ fromJSON(needs.setup.outputs.matrix) }}"}, {})
    with pytest.raises(Unsupported, match="expression"):
        expand_matrix({"matrix": {"os": "${{ fromJSON('[1' }}"}}, {})
    with pytest.raises(Unsupported, match="not a list"):
        expand_matrix({"matrix": {"os": "${{ 'ubuntu' }}"}}, {})


def test_workflow_values_are_read_as_yaml_1_2() -> None:
    document = load_yaml(
        "on: [push]\nenv: {INTEG_TESTS: yes, FLAGS: -DFOO=ON, OFF_SWITCH: off, N: 012,"
        " PY: 3.10, REAL: true, NOTHING: null, HEX: 0x1F}"
    )
    assert "on" in document  # YAML 1.1 makes this key True
    assert document["env"] == {
        "INTEG_TESTS": "yes",
        "FLAGS": "-DFOO=ON",
        "OFF_SWITCH": "off",
        "N": 12,  # decimal in 1.2, octal 10 in 1.1
        "PY": 3.1,  # a float, as GitHub reads it too
        "REAL": True,
        "NOTHING": None,
        "HEX": 31,
    }
