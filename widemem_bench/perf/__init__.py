"""The perf benchmark's stages (run by `widemem_bench.experiments.perf`, one subprocess each)."""
