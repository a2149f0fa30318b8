"""Where an environment image keeps what offline runs need: the paths and variables the
image build (`ci_runner.environments`) and the language profiles that fill it agree on."""

from __future__ import annotations

from ci_runner.image_layout import ENV_CACHE_DIR

ENV_ROOT = "/opt/arena"
CACHE_DIR = ENV_CACHE_DIR  # the sandbox user's: each run writes its own bounded layer over it
VENV = f"{CACHE_DIR}/venv"
WHEELHOUSE = f"{ENV_ROOT}/wheelhouse"
GOMODCACHE = f"{ENV_ROOT}/gomod"  # Go keeps its module cache read-only anyway
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Set in the environment build's warm-up run only: the image's `cargo` then builds the tests
# a `cargo test` would run, and runs none. The warm-up is for the build cache, and cargo keeps
# no test results. Go's warm-up runs its tests: `go test` caches their results, so every later
# run replays the packages its diffs leave alone instead of running them again
WARM_UP_VARIABLE = "ARENA_WARM_UP"

# Browsers and app shells that npm packages' install scripts download from their vendors'
# servers, which a build does not reach (it reaches package registries only): their
# documented switches skip the download, so the install of everything else succeeds and is
# repeatable offline; a test that drives one of them fails, and says so
VENDOR_DOWNLOADS_OFF = {
    "CYPRESS_INSTALL_BINARY": "0",
    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
    "PUPPETEER_SKIP_DOWNLOAD": "true",
    "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD": "true",
    "ELECTRON_SKIP_BINARY_DOWNLOAD": "1",
    "CHROMEDRIVER_SKIP_DOWNLOAD": "true",
    "GECKODRIVER_SKIP_DOWNLOAD": "true",
}

# npm's cache and pnpm's store in the image's cache: the build's `pnpm install` fills them,
# every run's repeats it offline into its own workspace
NODE_CACHES = {
    "npm_config_cache": f"{CACHE_DIR}/npm",
    "npm_config_store_dir": f"{CACHE_DIR}/pnpm-store",
    "npm_config_offline": "true",
    **VENDOR_DOWNLOADS_OFF,
}
