"""OmegaConf resolvers the configs use; registered on import (run.py and tests import this)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from omegaconf import OmegaConf

from widemem_bench.provenance import REPO_ROOT


def _root() -> str:
    # The checkout, not the current folder: runs never land wherever the user stands.
    return str(REPO_ROOT)


def traversal(value: str) -> str | None:
    """The override in ``value`` whose text has a ``..`` path component, else None.

    Run and sweep folders are named after the overrides (``key=value,key=value``): a
    value like ``../../x`` would put the run outside its sweep folder. A separator
    without ``..`` only nests folders inside it, and paths such as
    ``params.locomo_path=/data/x.json`` are legitimate, so only ``..`` is refused.
    """
    for part in value.split(","):
        if ".." in re.split(r"[/\\]", part):
            return part
    return None


def check_overrides(argv: Sequence[str]) -> str | None:
    """One line for the first command-line override that would name a folder outside
    its run or sweep folder (checked before Hydra creates any folder)."""
    for arg in argv:
        if not arg.startswith("-") and "=" in arg and (bad := traversal(arg)) is not None:
            key, value = bad.split("=", 1) if "=" in bad else (arg.split("=", 1)[0], bad)
            return (f"{key.lstrip('+~')}: value {value!r} has a '..' path component; run "
                    "folders are named after overrides and must stay inside the sweep folder")
    return None


def _dirname(override_dirname: str) -> str:
    # Last line of defence (overrides from a file or a launcher skip check_overrides).
    bad = traversal(override_dirname)
    if bad is not None:
        raise ValueError(
            f"override {bad!r} has a '..' path component: its run folder would leave the sweep folder"
        )
    # An empty override list would put the run straight into the sweep folder; name it.
    return override_dirname or "default"


def register() -> None:
    OmegaConf.register_new_resolver("wb_root", _root, replace=True)
    OmegaConf.register_new_resolver("wb_dirname", _dirname, replace=True)


register()
