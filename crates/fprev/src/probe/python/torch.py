"""PyTorch as a black box: sum, dot, gemv (torch.mv), gemm (torch.mm), on the
CPU or, with `torch:OP:cuda`, on a GPU, where f16/bf16 GEMMs run on tensor
cores (fused nodes)."""

import numpy as np
import torch

from fprev_bridge import follow, np_dtype

_TORCH = {
    "f64": torch.float64,
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "e4m3": getattr(torch, "float8_e4m3fn", None),
    "e5m2": getattr(torch, "float8_e5m2", None),
}
# torch.from_numpy knows no ml_dtypes types: those travel as their bits.
_BITS = {"bf16": (np.int16, 2), "e4m3": (np.uint8, 1), "e5m2": (np.uint8, 1)}


def _setup(dtype, arg):
    device = arg or "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError("torch:...:%s asked for, but torch sees no CUDA device" % device)
    dt = _TORCH[dtype]
    if dt is None:
        raise TypeError("this torch has no %s dtype" % dtype)
    if device.startswith("cuda"):
        # Keep the GEMM in the input format's own kernels: no TF32, no
        # reduced-precision reductions beyond what the format implies.
        torch.backends.cuda.matmul.allow_tf32 = False

    def to_tensor(x):
        bits = _BITS.get(dtype)
        t = torch.from_numpy(x.view(bits[0]) if bits else x)
        return (t.view(dt) if bits else t).to(device)

    return device, dt, to_tensor


def sum(n, dtype, shape, arg):
    """`torch.sum` of a 1-D tensor."""
    device, dt, to_tensor = _setup(dtype, arg)

    def fn(x):
        return torch.sum(to_tensor(x)).item()

    fn.may_fuse = device != "cpu"
    return fn


def _weights(n, dtype, device, to_tensor, cols=None):
    """The weights w (ones but for fprev's dot calls, fn.weights) and a
    function giving them as a tensor: w itself, or w in each of `cols`
    columns. A vector on the CPU shares w's memory, so it is made once;
    anything else is made again (and copied to a GPU) only when fprev
    changes w."""
    w = np.ones(n, dtype=np_dtype(dtype))
    if cols is None and device == "cpu":
        t = to_tensor(w)
        return w, lambda: t
    if cols is None:
        return w, follow(w, to_tensor)
    return w, follow(w, lambda w: to_tensor(np.ascontiguousarray(np.broadcast_to(w[:, None], (n, cols)))))


def dot(n, dtype, shape, arg):
    """`torch.dot(x, w)`, w = ones but for fprev's dot calls."""
    device, dt, to_tensor = _setup(dtype, arg)
    w, weights = _weights(n, dtype, device, to_tensor)

    def fn(x):
        return torch.dot(to_tensor(x), weights()).item()

    fn.weights = w
    fn.may_fuse = device != "cpu"
    return fn


def _matrix(n, dtype, shape, arg, cols, column=0):
    device, dt, to_tensor = _setup(dtype, arg)
    w, b = _weights(n, dtype, device, to_tensor, cols or None)

    def fn(a):
        a = to_tensor(a)
        out = torch.mm(a, b())[:, column] if cols else torch.mv(a, b())
        return out.to(torch.float64).cpu().numpy()

    fn.weights = w
    fn.rows = shape[0] if shape else n
    fn.may_fuse = device != "cpu"
    return fn


def gemv(n, dtype, shape, arg):
    """`torch.mv(A, w)` with A of M x K (K = n), w as for `dot`: one sum per row."""
    return _matrix(n, dtype, shape, arg, 0)


def gemm(n, dtype, shape, arg, column=0):
    """`torch.mm(A, B)`, B of K x N holding w (as for `dot`) in every column:
    column `column` (0) holds one sum per row."""
    return _matrix(n, dtype, shape, arg, shape[1] if shape else n, column)


def _facts():
    """The threads PyTorch's CPU kernels use and the CPU capability it
    dispatches on."""
    out = {"threads": str(torch.get_num_threads())}
    try:
        out["cpu capability"] = torch.backends.cpu.get_cpu_capability()
    except Exception:  # older PyTorch
        pass
    if torch.cuda.is_available():
        out["cuda"] = "%s (%s)" % (torch.version.cuda, torch.cuda.get_device_name(0))
    return out
