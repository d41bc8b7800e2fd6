"""Peers: other memory layers run side by side with the reference engine.

`widemem` runs widemem-ai 2.0.2's real `WideMemory` (optional extra `peers`).
Importing this package never imports widemem; the adapter module does, lazily.
"""

from widemem_bench.peers.widemem import (
    WIDEMEM_VERSION,
    PeerHit,
    PeerSearch,
    WidememPeer,
    named_minilm_folder,
    widemem_available,
)

__all__ = [
    "WIDEMEM_VERSION",
    "PeerHit",
    "PeerSearch",
    "WidememPeer",
    "named_minilm_folder",
    "widemem_available",
]
