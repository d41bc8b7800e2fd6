"""What experiments evaluate with: the timeline replay through MemoryEngine (`replay`).

The batched scorer, its setting-free twin, stays in `widemem_bench.experiments.batch`;
both take their EngineConfig from `widemem_bench.harness.settings.engine_config`.
"""
