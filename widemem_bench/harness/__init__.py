"""Harness machinery that turns a composed config into what the code runs.

- `settings`: the ONE builder of `EngineConfig` from the composed config (the `engine`
  node plus the swept-axis groups), the batched scorer's view of it, the thresholds in
  force, and embedders built from the composed `embedder` node (every field acts).
- `engines`: `build_engine`, the engine handed its confidence function, warm-up and
  calibrated thresholds (engine/ never imports answerability/ or calibration/), and
  `thresholds_in_force`.
- `keys`: which keys each experiment honours, and the one-line refusals of a key that
  is misspelt, not honoured by the chosen experiment, not applicable to the embedder's
  runtime, or a swept value that would name a folder outside the output root.

No Hydra here (plain dicts in, plain values out); `run.py` and `cli.py` call it.
"""

from widemem_bench.harness.engines import build_engine, calibrated_thresholds, thresholds_in_force
from widemem_bench.harness.settings import batch_engine, embedder_from_node, engine_config

__all__ = ["batch_engine", "build_engine", "calibrated_thresholds", "embedder_from_node", "engine_config",
           "thresholds_in_force"]
