"""`docker compose up` as a lab would run it: the whole service, end to end, under its own project.

One stack serves every check in order (building and starting it is the expensive part): health,
a model served on this machine, the demo corpus imported, a tournament through the API to its end
while the CI worker is killed and compose brings it back, the leaderboard in Chromium, results that
survive `down` and `up`, a migration added between two `up`s, and nothing left after `down -v`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from arena.languages import Language
from arena.tasks.demo import demo_tasks
from arena.tasks.gitrepo import commit_directory
from arena.tasks.schema import Task
from tests.arena.scripted_server import DEEP, WRONG_AND_DEEP, Reply, scripted_server
from tests.servers import free_port

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
# where every app container keeps its caches (deploy/Dockerfile): workers commit the demo repos there
CONTAINER_CACHE = "/var/cache/arena"
# the settings ./dev setup found for building images on this machine
BUILD_SETTINGS = (
    "ARENA_BASE_IMAGE",
    "ARENA_WEB_STAGE",
    "ARENA_NODE_IMAGE",
    "ARENA_BUILD_NETWORK",
    "ARENA_BUILD_CA_BUNDLE",
)
APP_SERVICES = ("api", "worker-control", "worker-llm", "worker-ci")
MIRRORED = "https://git.example.invalid/"  # repos under it come from the stack's mirror folder
BUILD_DISK_MB = 2048
BUILD_MEMORY_MB = 2048
# a dataset line whose setup script, run as root in the build box, tries a raw socket (on a
# host-network build it sniffed the admin token), 4 GiB of memory, then writes without end
HOSTILE_SETUP = (
    "#!/bin/bash\n# this project's build dependencies\n"
    "pip install --no-index --find-links ci/wheels -r ci/requirements.txt || true\n"
    "python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)' 2>/dev/null"
    ' && echo "raw socket: granted" || echo "raw socket: refused"\n'
    "python3 -c 'x = bytearray(4096 * 2**20); x[::4096] = b\"1\" * len(x[::4096])' 2>/dev/null"
    ' && echo "memory: granted" || echo "memory: refused"\n'
    "cp /dev/zero /var/fill\n"
)
HOSTILE_FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "ci/requirements.txt": "six\n",
    "ci/install-deps.sh": HOSTILE_SETUP,
    ".github/workflows/ci.yml": "on: [pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    "    steps:\n      - uses: actions/checkout@v4\n      - run: bash ci/install-deps.sh\n"
    "      - run: python -m pytest -q\n",
}
# token usage no request could have used: it once made budgets unreachable, the tournament
# listing a 422 for everyone and the match an infrastructure fault with nobody to blame
IMPOSSIBLE_USAGE = (
    '{"prompt_tokens": -8000000000, "completion_tokens": 2000000000, "total_tokens": NaN}'
)
HOSTILE_PATCH = (
    "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
    " def add(a, b):\n-    return a - b\n+    return a + b\n"
)
TOKEN = secrets.token_urlsafe(24)
ADMIN = {"Authorization": f"Bearer {TOKEN}"}

pytestmark = [pytest.mark.docker, pytest.mark.timeout(3600)]


@dataclass
class Stack:
    project: str
    env_file: Path
    url: str
    work: Path

    def compose(self, *args: str, files: tuple[Path, ...] = (), timeout: float = 1200) -> str:
        command = ["docker", "compose", "--project-name", self.project]
        command += ["--env-file", str(self.env_file), "-f", str(ROOT / "compose.yaml")]
        for extra in files:
            command += ["-f", str(extra)]
        done = subprocess.run(
            [*command, *args], cwd=ROOT, env=_compose_env(), capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
        assert done.returncode == 0, f"docker compose {' '.join(args)}:\n{done.stderr[-4000:]}"
        return done.stdout

    def up(self, files: tuple[Path, ...] = ()) -> None:
        self.compose("up", "-d", "--build", "--wait", "--wait-timeout", "600", files=files)

    def psql(self, sql: str) -> str:
        return self.compose(
            "exec", "-T", "postgres", "psql", "-U", "arena", "-d", "arena", "-At", "-c", sql
        ).strip()

    def container(self, service: str) -> str:
        return self.compose("ps", "-q", service).strip()

    def leftovers(self) -> dict[str, list[str]]:
        label = f"label=com.docker.compose.project={self.project}"
        found = {}
        for kind in ("container", "network", "volume"):
            listed = subprocess.run(
                ["docker", kind, "ls", "-q", *(["-a"] if kind == "container" else []),
                 "--filter", label],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            found[kind] = listed.stdout.split()
        return found


def _compose_env() -> dict[str, str]:
    """Only what reaches the engine: ARENA_* of this process (./dev's exports, other tests'
    throwaway servers) would override the project's env file."""
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME") or k.startswith("DOCKER_")}


def _build_settings() -> dict[str, str]:
    env_file = ROOT / ".env"
    if not env_file.is_file():
        pytest.fail(".env is missing: `./dev setup` writes it (with this machine's build settings)")
    found = {}
    for line in env_file.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in BUILD_SETTINGS:
            found[key.strip()] = value.strip()
    return found


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    if shutil.which("docker") is None:
        pytest.fail("docker is not installed: run ./dev setup")
    work = tmp_path_factory.mktemp("compose")
    port = free_port()
    settings = {
        **_build_settings(),
        "ARENA_ADMIN_TOKEN": TOKEN,
        "ARENA_SECRET_KEY": secrets.token_urlsafe(32),
        "ARENA_POSTGRES_PASSWORD": secrets.token_urlsafe(16),
        "ARENA_PORT": str(port),
    }
    mirrors = work / "git-mirrors"  # owned by this process's user, not the services' 10001
    mirrors.mkdir()
    settings |= {
        "ARENA_GIT_MIRRORS_DIR": str(mirrors),
        "ARENA_GIT_MIRRORS": f"{MIRRORED}=/srv/git/{{owner}}+{{name}}.git",
        # a build past them is killed (the demo tasks' builds use far less)
        "ARENA_BUILD_DISK_MB": str(BUILD_DISK_MB),
        "ARENA_BUILD_MEMORY_MB": str(BUILD_MEMORY_MB),
    }
    env_file = work / "compose.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    stack = Stack(f"arena-test-{os.getpid()}", env_file, f"http://127.0.0.1:{port}", work)
    try:
        stack.up()
        yield stack
    finally:
        logs = subprocess.run(
            ["docker", "compose", "--project-name", stack.project, "--env-file", str(env_file),
             "-f", str(ROOT / "compose.yaml"), "logs", "--no-color", "--tail", "200"],
            cwd=ROOT, env=_compose_env(), capture_output=True, text=True,
        )  # fmt: skip
        (work / "compose.log").write_text(logs.stdout + logs.stderr)
        stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "20")


def _published_ports(stack: Stack) -> dict[str, list[str]]:
    """Per service, the host addresses its ports are published on (services without: left out)."""
    found: dict[str, list[str]] = {}
    for cid in stack.compose("ps", "-q").split():
        shown = subprocess.run(
            ["docker", "inspect", cid], capture_output=True, text=True, check=True
        )
        container = json.loads(shown.stdout)[0]
        service = container["Config"]["Labels"]["com.docker.compose.service"]
        networks = container["NetworkSettings"]["Networks"]
        assert list(networks) == [f"{stack.project}_default"], (service, list(networks))
        bindings = container["HostConfig"]["PortBindings"] or {}
        addresses = [b["HostIp"] for binds in bindings.values() for b in binds or []]
        if addresses:
            found[service] = addresses
    return found


def _docker_bridge_address() -> str:
    """The host's address on Docker's default bridge: what `host-gateway` resolves to."""
    shown = subprocess.run(
        ["docker", "network", "inspect", "bridge", "--format", "{{json .IPAM.Config}}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    for config in json.loads(shown.stdout) or []:
        if config.get("Gateway"):
            return str(config["Gateway"])
    addresses = subprocess.run(
        ["ip", "-4", "-o", "addr", "show", "docker0"], capture_output=True, text=True, check=True
    ).stdout.split()
    return addresses[addresses.index("inet") + 1].split("/")[0]


def _container_demo_corpus(tasks: list[Task], mirrors: Path, mirrored: str) -> bytes:
    """The demo corpus as JSONL, its repos where the containers commit them (same SHAs);
    the `mirrored` task's repo named by a URL that the stack's mirror rule serves from the
    folder `mirrors`, as a lab's local mirrors would be."""
    lines = []
    for task in tasks:
        name = Path(task.repo).name
        repo = f"{CONTAINER_CACHE}/demo-repos/{name}"
        if task.instance_id == mirrored:
            bare = mirrors / f"arena-demo+{name}.git"
            subprocess.run(["git", "clone", "-q", "--bare", task.repo, str(bare)], check=True)
            repo = f"{MIRRORED}arena-demo/{name}"
        lines.append(task.model_copy(update={"repo": repo}).model_dump_json())
    return ("\n".join(lines) + "\n").encode()


def _one_per_language(tasks: list[Task]) -> list[str]:
    """The first task of each language."""
    first: dict[str, str] = {}
    for task in tasks:
        first.setdefault(task.language.value, task.instance_id)
    return sorted(first.values())


def _hostile_line(mirrors: Path) -> bytes:
    """A dataset line (SwingArena's fields) of a repo in the mirror folder whose CI job's
    setup step writes zeros until something stops it."""
    source = mirrors.parent / "hostile-source"
    for path, text in HOSTILE_FILES.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text(text)
    commit = commit_directory(source, mirrors / "arena-demo+hostile.git")
    line = {
        "repo": f"{MIRRORED}arena-demo/hostile",
        "instance_id": "hostile-1",
        "language": "python",  # the API is given no file name to read it from
        "base_commit": commit,
        "patch": HOSTILE_PATCH,
        "test_patch": "",
        "problem_statement": "add subtracts",
        "created_at": "2024-06-01 00:00:00",
        "FAIL_TO_PASS": [],
        "PASS_TO_PASS": [],
        "ci_name_list": [["test", ".github/workflows/ci.yml"]],
    }
    return (json.dumps(line) + "\n").encode()


def _hostile_model(deep_on: Task, bad_usage_on: Task) -> Callable[[dict[str, Any]], Reply]:
    """A model that submits a patch 1,000 folders deep on one task, reports impossible token
    usage on every answer about another, and finds nothing elsewhere (the service plays its
    matches in no fixed order, so the request says which task and role it is)."""

    def answer(payload: dict[str, Any]) -> Reply:
        prompt = "\n".join(str(m.get("content")) for m in payload.get("messages") or [])
        if bad_usage_on.problem_statement.splitlines()[0] in prompt:
            return Reply(content="I could not find the bug.", usage=IMPOSSIBLE_USAGE)
        submitting = "You are a software engineer fixing an issue" in prompt
        if submitting and deep_on.problem_statement.splitlines()[0] in prompt:
            return Reply(content=WRONG_AND_DEEP)
        return Reply(content="I could not find the bug.")

    return answer


def _sandboxes_of(worker: str) -> list[str]:
    """The ids of the sandboxes that name `worker`'s container (its full id) as their owner."""
    full = subprocess.run(
        ["docker", "inspect", "--format", "{{.Id}}", worker],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--no-trunc", "--filter", f"label=arena.ci.container={full}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return listed.stdout.split()


def _added_line(patch: str) -> str:
    """A line the patch adds that JSON shows as it is (no quote, no backslash)."""
    added = [
        line[1:].strip()
        for line in patch.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    return max((a for a in added if '"' not in a and "\\" not in a), key=len)


def _wait_for(what: str, check: Callable[[], T], timeout: float, every: float = 2.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


def _progress(api: httpx.Client, tournament: int) -> dict[str, int]:
    shown = api.get(f"/api/tournaments/{tournament}")
    assert shown.status_code == 200, shown.text
    return dict(shown.json()["progress"])


def test_the_whole_service_in_one_compose_project(stack: Stack) -> None:
    api = httpx.Client(base_url=stack.url, timeout=30)

    # every service healthy, the CI worker's engine seen through it
    health = api.get("/api/health").json()
    assert health["status"] == "ok", health
    assert all(q["workers"] for q in health["queues"].values()), health

    # traffic stays on this machine: only the API is published, on loopback, and every
    # container sits on the project's own bridge network
    published = _published_ports(stack)
    assert set(published) == {"api"}, published
    assert published["api"] and all(ip == "127.0.0.1" for ip in published["api"]), published

    # a model served on this machine, which the llm worker reaches as host.docker.internal
    # (hostile: its answers on one task are 1,000 folders deep, on another its usage is
    # impossible; neither may void a match it loses, break a listing or reach a budget)
    bridge = _docker_bridge_address()
    demo = demo_tasks(stack.work / "demo-repos")
    played = _one_per_language(demo)
    by_language = {t.language.value: t for t in demo if t.instance_id in played}
    deep_on, bad_usage_on = by_language["python"], by_language["go"]
    with scripted_server([], host=bridge, route=_hostile_model(deep_on, bad_usage_on)) as llm:
        port = llm.url.rsplit(":", 1)[1]
        created = api.post("/api/models", headers=ADMIN, json={
            "name": "scripted", "base_url": f"http://host.docker.internal:{port}",
            "model": "scripted-1", "api_key": "sk-compose-test", "organization": "Test Lab"})  # fmt: skip
        assert created.status_code == 201, created.text

        # one task of each language: every toolchain plays, at half the demo tasks' CI time;
        # one of them comes from the mirror folder, which every service (the API and LLM
        # worker as uid 10001, the CI worker as root) reads though none of them owns it
        corpus = _container_demo_corpus(demo, stack.work / "git-mirrors", played[0])
        imported = api.post("/api/tasks/import", headers=ADMIN,
                            files={"file": ("demo.jsonl", corpus)})  # fmt: skip
        assert imported.status_code == 200, imported.text
        ids = [t["instance_id"] for t in imported.json()["imported"]]
        assert len(ids) == len(demo) and imported.json()["errors"] == [], imported.text
        assert set(played) <= set(ids), played
        started = api.post("/api/tournaments", headers=ADMIN,
                           json={"models": ["scripted", "oracle", "null"], "tasks": played})  # fmt: skip
        assert started.status_code == 202, started.text
        tournament = started.json()["id"]
        total = started.json()["progress"]["total"]
        assert total == 3 * len(played) == 3 * len(Language)

        # the CI worker dies mid-tournament; compose brings it back, the tournament goes on,
        # and the restarted worker removes the sandboxes it had up when it died
        _wait_for("a first finished match", lambda: _progress(api, tournament)["done"], 1500)
        killed = stack.container("worker-ci")
        orphans = _wait_for("a sandbox of the CI worker", lambda: _sandboxes_of(killed), 600, 1)
        subprocess.run(["docker", "kill", killed], check=True, capture_output=True)
        stack.up()
        assert stack.container("worker-ci") == killed  # the same container, restarted
        _wait_for(
            "the dead worker's sandboxes removed",
            lambda: not set(orphans) & set(_sandboxes_of(killed)),
            300,
        )

        # a hostile dataset line, validated while the tournament goes on: its setup step
        # is killed at the build's disk limit, and no match is affected
        hostile = _hostile_line(stack.work / "git-mirrors")
        imported = api.post("/api/tasks/import", headers=ADMIN,
                            files={"file": ("hostile.jsonl", hostile)})  # fmt: skip
        assert imported.status_code == 200 and not imported.json()["errors"], imported.text
        queued = api.post("/api/tasks/hostile-1/validate", headers=ADMIN)
        assert queued.status_code == 202, queued.text

        def ended() -> bool:
            return api.get(f"/api/tournaments/{tournament}").json()["status"] != "running"

        _wait_for("the tournament's end", ended, 2400, every=5)
        final = api.get(f"/api/tournaments/{tournament}").json()
        assert final["progress"]["done"] == total, final["progress"]
        # impossible usage is the model's own failure (no answer), never its endpoint's or
        # the infrastructure's, and adds nothing to what the tournament spent
        assert final["models_at_fault"] == [], final["models_at_fault"]
        assert all(0 <= s["tokens"] < 10**7 for s in final["spending"]), final["spending"]
        listed = api.get("/api/tournaments")
        assert listed.status_code == 200, listed.text
        assert llm.requests, "the scripted model was never asked"
        listing = api.get("/api/matches", params={"tournament": tournament, "limit": 100})
        for match in listing.json()["matches"]:
            if "scripted" not in (match["a"], match["b"]):
                continue
            assert match["status"] == "done" and match["result"] != "scripted", match
            shown = api.get(f"/api/matches/{match['id']}", headers=ADMIN).json()
            answers = [
                answer
                for played_round in shown["rounds"]
                for answer in played_round["answers"]
                if answer["model"] == "scripted"
            ]
            if match["task"] == bad_usage_on.instance_id:
                assert answers and all(
                    "usage.prompt_tokens" in (a["error"] or "") and a["prompt_tokens"] == 0
                    for a in answers
                ), answers
            elif match["task"] == deep_on.instance_id:  # its deep patch lost, voiding nothing
                submitted = [a for a in answers if a["role"] == "submitter"]
                assert submitted and DEEP in (submitted[0]["diff"] or ""), submitted

        def judged() -> dict[str, object] | None:
            shown = api.get("/api/tasks/hostile-1").json()
            return None if shown["validity"] == "unvalidated" else dict(shown)

        verdict = _wait_for("the hostile line's validation", judged, 900, every=5)
        assert verdict["validity"] == "invalid", verdict
        reason = str(verdict["validation_reason"])
        assert f"killed: the build's disk limit of {BUILD_DISK_MB} MiB" in reason, reason
        assert "raw socket: refused" in reason and "memory: refused" in reason, reason

    # a dataset id that is a spreadsheet formula is text in the CSV export
    formula = {**json.loads(hostile), "instance_id": " =1+2"}
    uploaded = api.post("/api/tasks/import", headers=ADMIN,
                        files={"file": ("formula.jsonl", json.dumps(formula).encode())})  # fmt: skip
    assert uploaded.status_code == 200, uploaded.text
    exported = api.get("/api/tasks/report", headers=ADMIN, params={"format": "csv"})
    cells = [cell for row in csv.reader(io.StringIO(exported.text)) for cell in row]
    shown = [cell for cell in cells if "=1+2" in cell]
    assert shown and all(cell.startswith("'") for cell in shown), exported.text[:2000]
    assert not [c for c in cells if c.lstrip(" \t\r\n")[:1] in ("=", "+", "@")]

    # a JSON upload nested 100,000 deep is a 4xx naming the problem
    nested = api.post("/api/tasks/import", headers=ADMIN,
                      files={"file": ("tasks.json", b"[" * 100_000, "application/json")})  # fmt: skip
    assert nested.status_code == 422, nested.text
    assert "nested more than 64 levels deep" in nested.text

    # the leaderboard fills in from the stored snapshot
    def board() -> list[dict[str, object]]:
        shown = api.get("/api/leaderboard", params={"tournament": tournament}).json()
        return list(shown["rows"]) if shown["match_count"] == total else []

    rows = _wait_for("the tournament's leaderboard", board, 300)
    assert {r["model"] for r in rows} == {"scripted", "oracle", "null"}
    results = api.get("/api/results.jsonl", params={"tournament": tournament}).text.splitlines()
    assert len(results) == total

    # the website, in Chromium, shows the leaderboard's models
    chromium = shutil.which("chromium")
    assert chromium, "chromium is missing: ./dev test installs it"
    shot = stack.work / "leaderboard.png"
    page = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000",
         "--dump-dom", f"{stack.url}/"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert page.returncode == 0, page.stderr[-2000:]
    for model in ("scripted", "oracle", "null"):
        assert f">{model}<" in page.stdout, f"{model} is not on the leaderboard page"
    # a link to one match (the site routes in the URL fragment) renders its evidence
    match = api.get(
        "/api/matches", params={"tournament": tournament, "limit": 1, "status": "done"}
    ).json()
    match_id, task_id = match["matches"][0]["id"], match["matches"][0]["task"]
    deep = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000",
         "--dump-dom", f"{stack.url}/#/matches/{match_id}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert task_id in deep.stdout, f"/matches/{match_id} did not render its match"
    # the task can be played again: its gold patch (which the oracle answered) is the admin's
    gold = _added_line(next(t for t in demo if t.instance_id == task_id).patch)
    assert gold not in api.get(f"/api/matches/{match_id}").text
    assert gold in api.get(f"/api/matches/{match_id}", headers=ADMIN).text
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000",
         "--window-size=1280,900", f"--screenshot={shot}", f"{stack.url}/"],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert shot.stat().st_size > 10_000

    # results survive `down` (volumes kept) and `up` again
    matches_before = stack.psql("SELECT count(*) FROM matches")
    stack.compose("down", "--timeout", "20")
    assert not stack.leftovers()["container"]
    stack.up()
    assert stack.psql("SELECT count(*) FROM matches") == matches_before
    assert (
        len(api.get("/api/results.jsonl", params={"tournament": tournament}).text.splitlines())
        == total
    )

    # a migration added between two `up`s is applied at start, and no row is lost
    migrations = stack.work / "migrations"
    shutil.copytree(ROOT / "arena" / "store" / "migrations", migrations)
    (migrations / "9999_compose_probe.sql").write_text(
        "CREATE TABLE compose_probe (id integer PRIMARY KEY);\nINSERT INTO compose_probe VALUES (1);\n"
    )
    mount = f"{migrations}:/app/arena/store/migrations:ro"
    override = stack.work / "compose.migration.yaml"
    override.write_text(
        "services:\n" + "".join(f"  {s}:\n    volumes: ['{mount}']\n" for s in APP_SERVICES)
    )
    stack.up(files=(override,))
    assert stack.psql("SELECT count(*) FROM compose_probe") == "1"
    assert stack.psql("SELECT count(*) FROM matches") == matches_before
    assert api.get("/api/health").json()["status"] == "ok"

    # down -v leaves no container, network or volume of the project
    stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "20", files=(override,))
    assert stack.leftovers() == {"container": [], "network": [], "volume": []}
