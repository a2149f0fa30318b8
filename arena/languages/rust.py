"""Rust tasks: `.rs` sources and Cargo's files, libtest ids."""

import tree_sitter_rust

from arena.languages.profile import Language, TaskProfile
from arena.ownership.rust import rust_cases

PROFILE = TaskProfile(
    language=Language.RUST,
    aliases=("rs",),
    source_suffixes=(".rs",),
    manifests=("Cargo.toml", "Cargo.lock"),
    manifest_suffixes=(),
    grammar=tree_sitter_rust.language,
    test_suffixes=(".rs",),
    find_cases=rust_cases,
)
