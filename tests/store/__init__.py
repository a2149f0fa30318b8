"""Throwaway PostgreSQL and Redis servers for tests (`servers`); the tests of `arena/store`
are in tests/arena/store, beside the package they test."""
