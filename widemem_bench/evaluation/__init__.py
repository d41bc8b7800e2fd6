"""What experiments evaluate with: the timeline replay through MemoryEngine (`replay`).

The batched scorer, its setting-free twin, lives beside the engine (`widemem_bench.engine.batch`);
both take their EngineConfig from `widemem_bench.harness.settings.engine_config`.
"""
