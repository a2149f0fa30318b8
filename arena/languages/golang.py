"""Go tasks: `.go` sources and the module files, `go test -json` ids."""

import tree_sitter_go

from arena.languages.profile import Language, TaskProfile
from arena.ownership.golang import go_cases

PROFILE = TaskProfile(
    language=Language.GO,
    aliases=("golang",),
    source_suffixes=(".go",),
    manifests=("go.mod", "go.sum"),
    manifest_suffixes=(),
    grammar=tree_sitter_go.language,
    test_suffixes=(".go",),
    find_cases=go_cases,
)
