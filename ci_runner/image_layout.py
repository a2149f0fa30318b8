"""What every CI image shares: its unprivileged user, the workspace, and where an environment
image keeps its warm caches. A leaf module, so that image builds and sandboxes agree on these
without importing each other."""

from __future__ import annotations

# an environment image (ci_runner.environments) carries this label: its warm caches sit in its
# own, top layer at ENV_CACHE_DIR, and its sandboxes mount there a bounded overlay over that
# layer (ci_runner.providers.docker.cache_layer) instead of copying the caches into a volume
# every run
ENV_IMAGE_LABEL = "arena.env"
# how many of an environment image's top layers hold its caches: 1 built whole, 2 built on a
# repository layer (ci_runner.environments); a run's cache layer lies over all of them
ENV_CACHE_LAYERS_LABEL = f"{ENV_IMAGE_LABEL}.cache-layers"
ENV_CACHE_DIR = "/opt/arena/cache"
SANDBOX_UID = 1000
SANDBOX_HOME = "/home/arena"
WORKSPACE = "/workspace"
