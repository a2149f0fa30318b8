"""Error types of the CI runner, each with a message a user can act on."""


class CIError(Exception):
    """Base of every error the CI runner raises on purpose."""


class PatchError(CIError):
    """A diff is unsafe or does not apply; raised before any container starts."""

    def __init__(self, path: str, reason: str, diff_index: int | None = None) -> None:
        self.path = path
        self.reason = reason
        self.diff_index = diff_index
        where = f"diff #{diff_index + 1}: " if diff_index is not None else ""
        super().__init__(f"{where}{path}: {reason}")


class WorkspaceError(CIError):
    """The repository source or commit could not be fetched or checked out; `reason` is the
    import report's category, which says whose fault it is."""

    reason = "repo not reachable"


class HostUnreachable(WorkspaceError):
    """The repo's host did not answer (name resolution, connection, time): this machine's
    network, not the task."""

    reason = "repo host unreachable"


class RepoNotFound(WorkspaceError):
    """The host answered, and holds no such repository (or asks for credentials)."""

    reason = "repo not found"


class CommitMissing(WorkspaceError):
    """The repo was reached and does not hold the task's commit (rewritten history, a fork's
    commit): the dataset line's."""

    reason = "commit not in repo"


class MirrorIncomplete(WorkspaceError):
    """The repo (a mirror) names the commit but lacks objects under it: the mirror's owner's."""

    reason = "mirror incomplete"


class ReportError(CIError):
    """A test report is missing or cannot be parsed."""


class SandboxError(CIError):
    """The container engine failed us: an infrastructure fault, not the code under test."""


class ImageError(SandboxError):
    """A CI image could not be built or found."""


class ServiceError(CIError):
    """A service of the job cannot run here (an image we cannot stand in for) or did not
    start (e.g. no password given): a fault of the task, with the service's own words."""


class EnvironmentBuildError(CIError):
    """A setup step (or the preparation around it) failed: a fault of the task, not the host."""
