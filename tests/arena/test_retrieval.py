"""BM25 retrieval: functions as chunks, the reviewer leaning to tests, the budget kept."""

from arena.players.base import Role
from arena.retrieval import RepoIndex, chunk_file, estimate_tokens, pack_context

FILES = {
    "shop/cart.py": (
        "import math\n\n\nclass Cart:\n    def total(self):\n        return sum(self.prices)\n\n\n"
        "def apply_discount(price, percent):\n    return price - price * percent / 100\n\n\n"
        "def shipping_cost(weight):\n    return math.ceil(weight) * 3\n"
    ),
    "shop/users.py": "def login(name, password):\n    return name == 'admin'\n",
    "tests/test_cart.py": "from shop.cart import apply_discount\n\n\ndef test_discount():\n    assert apply_discount(100, 10) == 90\n",
    "main.go": "package main\n\n" + "".join(f"// line {i}\n" for i in range(100)),
}


def test_python_files_are_chunked_into_functions_and_classes() -> None:
    chunks = chunk_file("shop/cart.py", FILES["shop/cart.py"])
    starts = {c.text.splitlines()[0] for c in chunks}
    assert {
        "class Cart:",
        "def apply_discount(price, percent):",
        "def shipping_cost(weight):",
    } <= starts


def test_other_files_get_overlapping_line_windows() -> None:
    chunks = chunk_file("main.go", FILES["main.go"])
    assert len(chunks) >= 3 and chunks[0].start == 1 and chunks[1].start < chunks[0].end


def test_issue_text_finds_the_function_and_the_reviewer_leans_to_tests(tmp_path: object) -> None:
    index = RepoIndex.build(list(FILES), FILES.get, None, "k")
    query = "apply_discount gives the wrong price for a percent discount"
    submitter = index.search(query, Role.SUBMITTER)
    assert submitter[0][0].text.startswith("def apply_discount")
    reviewer = index.search(query, Role.REVIEWER)
    assert reviewer[0][0].path == "tests/test_cart.py"


def test_packing_respects_the_token_budget() -> None:
    index = RepoIndex.build(list(FILES), FILES.get, None, "k")
    ranked = index.search("discount price cart shipping line", Role.SUBMITTER)
    packed = pack_context(ranked, budget_tokens=60)
    assert 0 < estimate_tokens(packed) <= 60 + 5
    assert "apply_discount" in packed


def test_the_chunking_is_cached_per_repo_and_commit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    RepoIndex.build(list(FILES), FILES.get, tmp_path, "repo@abc")
    cached = RepoIndex.build(list(FILES), lambda _: None, tmp_path, "repo@abc")  # no reads needed
    assert len(cached.chunks) > 3
    assert RepoIndex.build(list(FILES), lambda _: None, tmp_path, "repo@def").chunks == []
