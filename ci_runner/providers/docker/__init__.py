"""The Docker provider: sandboxes, build boxes, images and service containers on a Docker
engine. Only this package imports Docker's SDK (`ci_runner.providers` names it by where it
lives, and imports it when a setting asks for it)."""
