"""OmegaConf resolvers the configs use; registered on import (run.py and tests import this)."""

from __future__ import annotations

from omegaconf import OmegaConf

from widemem_bench.provenance import REPO_ROOT


def _root() -> str:
    # The checkout, not the current folder: runs never land wherever the user stands.
    return str(REPO_ROOT)


def _dirname(override_dirname: str) -> str:
    # An empty override list would put the run straight into the sweep folder; name it.
    return override_dirname or "default"


def register() -> None:
    OmegaConf.register_new_resolver("wb_root", _root, replace=True)
    OmegaConf.register_new_resolver("wb_dirname", _dirname, replace=True)


register()
