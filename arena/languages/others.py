"""Languages Arena does not run, by their source files' endings: a dataset line whose gold
patch and tests are in one of them is refused naming it ("language not supported:
typescript"), instead of being run with another language's toolchain."""

from __future__ import annotations

# lower-case file name ending -> language (the first ending that fits wins)
UNSUPPORTED_SUFFIXES: tuple[tuple[str, str], ...] = (
    (".d.ts", "typescript"),
    (".ts", "typescript"),
    (".tsx", "typescript"),
    (".mts", "typescript"),
    (".cts", "typescript"),
    (".js", "javascript"),
    (".jsx", "javascript"),
    (".mjs", "javascript"),
    (".cjs", "javascript"),
    (".vue", "javascript"),
    (".svelte", "javascript"),
    (".java", "java"),
    (".kt", "kotlin"),
    (".kts", "kotlin"),
    (".scala", "scala"),
    (".groovy", "groovy"),
    (".rb", "ruby"),
    (".r", "r"),
    (".rmd", "r"),
    (".m", "objective-c"),
    (".mm", "objective-c"),
    (".swift", "swift"),
    (".cs", "csharp"),
    (".fs", "fsharp"),
    (".php", "php"),
    (".pl", "perl"),
    (".pm", "perl"),
    (".lua", "lua"),
    (".dart", "dart"),
    (".ex", "elixir"),
    (".exs", "elixir"),
    (".erl", "erlang"),
    (".hs", "haskell"),
    (".ml", "ocaml"),
    (".zig", "zig"),
    (".jl", "julia"),
    (".nim", "nim"),
    (".sh", "shell"),
    (".bash", "shell"),
    (".zsh", "shell"),
    (".fish", "shell"),
    (".ps1", "powershell"),
    (".gd", "gdscript"),
)


def unsupported_language_of(path: str) -> str | None:
    """The language Arena does not run that `path` is a source file of, or None."""
    lowered = path.rsplit("/", 1)[-1].lower()
    return next((name for suffix, name in UNSUPPORTED_SUFFIXES if lowered.endswith(suffix)), None)
