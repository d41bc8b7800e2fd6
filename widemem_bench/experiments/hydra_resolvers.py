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


def folder_name_excluded_keys() -> set[str]:
    """Keys the root config leaves out of run folder names (``override_dirname.exclude_keys``)."""
    path = REPO_ROOT / "configs" / "config.yaml"
    if not path.is_file():
        return set()
    cfg = OmegaConf.load(path)
    keys = OmegaConf.select(cfg, "hydra.job.config.override_dirname.exclude_keys", default=None)
    return {str(k) for k in keys} if keys is not None else set()


def check_overrides(argv: Sequence[str], excluded: set[str] | None = None) -> str | None:
    """One line for the first command-line override that would name a folder outside
    its run or sweep folder (checked before Hydra creates any folder). Overrides that
    never name a folder (``hydra.*``, and the config's ``exclude_keys`` such as
    ``paths.output_dir=../../out``) are left alone."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    skip = folder_name_excluded_keys() if excluded is None else excluded
    parser = OverridesParser.create()
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        try:
            ov = parser.parse_override(arg)
        except HydraException:
            continue  # not an override: the front door's syntax check says so
        key = ov.key_or_group
        if key in skip or key.startswith(("hydra.", "hydra/")):
            continue
        if (bad := traversal(ov.get_value_string())) is not None:
            return (f"{key}: value {bad!r} has a '..' path component; run "
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
