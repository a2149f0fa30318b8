"""Which report ids belong to a test patch: the tests whose definition its diff changes.

The protocol's T's tests are the ids new in `base + gold + T` plus the existing tests whose
definition T changes (the changed lines fall inside that test function, method or case).
This package finds the second part: it applies T to the base files in memory, finds each
changed line's enclosing test case with a tree-sitter parser of the file's language, and maps
that case to the ids of a test report (pytest/JUnit, `go test -json`, libtest, ctest).

Line numbers are taken on `base` (T's old side) and `base + T` (its new side), the texts T's
hunks were written against: a test's name is the same there as on `base + gold + T`, and the
ids are what is compared. Ids are matched by path suffix, so a pipeline run from a
subdirectory (its ids relative to that directory) still maps.
"""

from arena.ownership.owners import base_test_ids, owned_test_ids

__all__ = ["base_test_ids", "owned_test_ids"]
