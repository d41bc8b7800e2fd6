"""The cross-encoder's quantized copies, each made from the verified fp32 build (`cross`) and cached
beside it, its sha256 in its manifest:

- ``int8`` (v4.1-v4.3): torch's dynamic quantization of every Linear layer (`build_int8`);
- ``onnx-int8`` (v4.4, DESIGN_LOG V10): the fp32 weights exported with ``torch.onnx``, checked
  against torch on probe pairs, then onnxruntime's dynamic quantization (`build_onnx_int8`). On one
  thread onnxruntime runs one short pair in about 2.4 ms where torch's int8 layers take about 7 ms.

Both quantize activations per call, so `cross.CrossScorer` scores them one pair per call.
``make answer-cross`` builds both; `cross.load_cross` reads them (`COPIES`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.answerability.cross import (
    _fp32,
    _fp32_model,
    _sha256,
    cross_dir,
    digest,
    machine_kind,
    remove_partial,
)


class OrtCross:
    """An onnxruntime session of the exported cross-encoder: one logit per row of a tokenized batch."""

    takes_numpy = True  # `CrossScorer` tokenizes to numpy arrays for it, to torch tensors otherwise

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = so.inter_op_num_threads = 1  # one thread: a pair's logit never depends on it
        self.session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def __call__(self, enc: Any) -> np.ndarray:
        feeds = {k: np.asarray(enc[k], dtype=np.int64) for k in self.inputs}
        return np.asarray(self.session.run(None, feeds)[0], dtype=np.float64).reshape(-1)


# torch's dynamic quantization: int8 weights per output channel, activations quantized per call
INT8_SCHEME = {"api": "torch.ao.quantization.quantize_dynamic", "modules": "every torch.nn.Linear",
               "qconfig": "per_channel_dynamic_qconfig", "dtype": "qint8"}
INT8_FILE = "model.int8.pt"
# the fp32 weights exported by torch.onnx, then onnxruntime's dynamic quantization
ONNX_INT8_SCHEME = {"export": "torch.onnx.export (TorchScript), opset 17, dynamic batch and length",
                    "api": "onnxruntime.quantization.quantize_dynamic", "weight_type": "QInt8", "per_channel": True}
ONNX_INT8_FILE = "model.int8.onnx"
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
ONNX_CHECK_TOL = 1e-3  # fp32 export against torch, max |logit difference| on the probe pairs
PROBE_PAIRS = (("what's my doctor's name?", "saw dr okafor again today, knee still sore"),
               ("which city does she live in", "Client moved to Bristol (per call 03/04)."),
               ("?", ""), ("how much is the rent", "rent is £1,150 pcm, paid on the 1st " * 8))


def _quantize(model: Any) -> Any:
    import warnings

    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    torch.set_num_threads(1)
    with warnings.catch_warnings():  # torch's notice that eager quantization moves to torchao
        warnings.simplefilter("ignore")
        return quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8).eval()


def _built(out: Path, name: str, log: Any) -> bool:
    if (out / "manifest.json").is_file():
        log(f"{name} cross-encoder already built: {out}")
        return True
    return False


def _staging(out: Path) -> Path:
    """An empty ``<out>.tmp``: a copy is written there and renamed whole, so a crash never leaves one that looks built."""
    tmp = out.with_name(out.name + ".tmp")
    remove_partial(tmp)
    tmp.mkdir(parents=True)
    return tmp


def _publish(tmp: Path, out: Path, manifest: dict[str, Any], log: Any) -> Path:
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    remove_partial(out)
    tmp.replace(out)
    log(f"wrote {out}")
    return out


def int8_dir(key: str, meta: dict[str, Any] | None = None) -> Path:
    """``<cache>/cross/int8-<sha256 of (fp32 weights, torch version, scheme)>``."""
    import torch

    meta = meta if meta is not None else _fp32(key)[1]
    return cross_dir("int8-" + digest({"fp32_weights": meta["weights_sha256"], "torch": torch.__version__,
                                       "scheme": INT8_SCHEME}))


def build_int8(key: str, log: Any = print) -> Path:
    """Quantize the verified fp32 build ``key`` to int8 (`INT8_SCHEME`), or find it in the cache."""
    import torch

    d, meta = _fp32(key)
    out = int8_dir(key, meta)
    if _built(out, "int8", log):
        return out
    model, _ = _fp32_model(d)
    q = _quantize(model)
    tmp = _staging(out)
    torch.save(q.state_dict(), tmp / INT8_FILE)
    return _publish(tmp, out, {"fp32_key": key, "fp32_weights_sha256": meta["weights_sha256"],
                               "torch": torch.__version__, "scheme": INT8_SCHEME, "machine": machine_kind(),
                               "weights_sha256": _sha256(tmp / INT8_FILE)}, log)


def onnx_int8_dir(key: str, meta: dict[str, Any] | None = None) -> Path:
    """``<cache>/cross/onnx-int8-<sha256 of (fp32 weights, torch, onnx, onnxruntime, scheme)>``."""
    from importlib.metadata import version

    meta = meta if meta is not None else _fp32(key)[1]
    return cross_dir("onnx-int8-" + digest({"fp32_weights": meta["weights_sha256"], "torch": version("torch"),
                                            "onnx": version("onnx"), "onnxruntime": version("onnxruntime"),
                                            "scheme": ONNX_INT8_SCHEME}))


def _export_checked(model: Any, tok: Any, path: Path, max_length: int) -> float:
    """Export the fp32 model to ``path`` and return its largest logit gap to torch on `PROBE_PAIRS`."""
    import warnings

    import torch

    enc = tok([q for q, _ in PROBE_PAIRS], [m for _, m in PROBE_PAIRS], truncation=True, max_length=max_length,
              padding=True, return_tensors="pt")
    args = tuple(enc[k] for k in ONNX_INPUTS)
    with warnings.catch_warnings():  # torch's notices about the TorchScript exporter
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, str(path), input_names=list(ONNX_INPUTS), output_names=["logits"],
                          dynamic_axes={k: {0: "batch", 1: "tokens"} for k in ONNX_INPUTS}, opset_version=17,
                          dynamo=False)
    with torch.inference_mode():
        want = model(**enc).logits.reshape(-1).numpy()
    got = OrtCross(path)({k: v.numpy() for k, v in enc.items()})
    return float(np.abs(got - want).max())


def build_onnx_int8(key: str, log: Any = print) -> Path:
    """Export the verified fp32 build ``key`` to ONNX (checked against torch) and quantize it
    (`ONNX_INT8_SCHEME`), or find it in the cache."""
    from importlib.metadata import version

    from onnxruntime.quantization import QuantType, quantize_dynamic

    d, meta = _fp32(key)
    out = onnx_int8_dir(key, meta)
    if _built(out, "onnx int8", log):
        return out
    model, tok = _fp32_model(d)
    tmp = _staging(out)
    fp = tmp / "model.fp32.onnx"
    gap = _export_checked(model, tok, fp, int(meta["settings"]["max_length"]))
    if not gap <= ONNX_CHECK_TOL:
        remove_partial(tmp)
        raise ValueError(f"answerability v4: the ONNX export of cross-encoder {key[:12]} differs from torch by "
                         f"{gap:.2e} on the probe pairs (over {ONNX_CHECK_TOL}); nothing was written")
    quantize_dynamic(str(fp), str(tmp / ONNX_INT8_FILE), weight_type=QuantType.QInt8, per_channel=True)
    fp.unlink()
    return _publish(tmp, out, {"fp32_key": key, "fp32_weights_sha256": meta["weights_sha256"],
                               "export_max_logit_gap": gap,
                               **{p: version(p) for p in ("torch", "onnx", "onnxruntime")},
                               "scheme": ONNX_INT8_SCHEME, "machine": machine_kind(),
                               "weights_sha256": _sha256(tmp / ONNX_INT8_FILE)}, log)


# each quantized copy: its folder, its file and what it is called in messages
COPIES: dict[str, tuple[Any, str, str]] = {"int8": (int8_dir, INT8_FILE, "int8"),
                                           "onnx-int8": (onnx_int8_dir, ONNX_INT8_FILE, "onnx int8")}

__all__ = ["COPIES", "INT8_FILE", "ONNX_INT8_FILE", "OrtCross", "build_int8", "build_onnx_int8", "int8_dir",
           "onnx_int8_dir"]
