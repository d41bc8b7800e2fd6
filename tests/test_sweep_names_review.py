"""Review of issue 17's sweep folder names: the '..' check applies to the overrides that
name a run folder, not to keys the config leaves out of folder names."""

from __future__ import annotations

import pytest

from widemem_bench.experiments.hydra_resolvers import check_overrides, folder_name_excluded_keys


def test_excluded_keys_come_from_the_root_config():
    assert {"paths.output_dir", "paths.cache_dir", "force"} <= folder_name_excluded_keys()


@pytest.mark.parametrize("arg", ["paths.output_dir=../../big-disk/out", "paths.cache_dir=../../cache",
                                 "hydra.sweep.dir=../../sweeps", "hydra.run.dir=../x/../run"])
def test_a_relative_path_in_a_key_that_names_no_folder_is_accepted(arg):
    assert check_overrides([arg]) is None


@pytest.mark.parametrize("arg", ["+params.tag=a/../../b", "params.step=0.1,x/../../..", "~params.x=../../y"])
def test_a_traversal_in_a_folder_naming_key_is_still_refused(arg):
    msg = check_overrides(["experiment=smoke", arg])
    assert msg is not None and "'..' path component" in msg and "\n" not in msg
