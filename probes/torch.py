"""PyTorch as a black box: sum, dot, gemv (torch.mv), gemm (torch.mm), on the
CPU or, with `torch:OP:cuda`, on a GPU, where f16/bf16 GEMMs run on tensor
cores (fused nodes)."""

import numpy as np
import torch

from fprev_bridge import inputs, matrix

_TORCH = {
    "f64": torch.float64,
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "e4m3": getattr(torch, "float8_e4m3fn", None),
    "e5m2": getattr(torch, "float8_e5m2", None),
}


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
    return device, dt


def _to(x, dt, device):
    # float32 (or float64) -> target: every value is exact in the target format.
    return torch.from_numpy(np.ascontiguousarray(x)).to(device=device, dtype=dt)


def _out(t):
    return t.to(torch.float64).cpu().numpy()


def sum(n, dtype, shape, arg):
    """`torch.sum` of a 1-D tensor, one call per row."""
    device, dt = _setup(dtype, arg)

    def fn(base, positions, values):
        return [_out(torch.sum(_to(a, dt, device))) for a in inputs(base, positions, values)]

    fn.batch = 4096
    fn.may_fuse = device != "cpu"
    return fn


def dot(n, dtype, shape, arg):
    """`torch.dot(x, ones)`, one call per row."""
    device, dt = _setup(dtype, arg)
    ones = torch.ones(n, dtype=dt, device=device)

    def fn(base, positions, values):
        return [_out(torch.dot(_to(a, dt, device), ones)) for a in inputs(base, positions, values)]

    fn.batch = 4096
    fn.may_fuse = device != "cpu"
    return fn


def _matrix(n, dtype, shape, arg, cols):
    device, dt = _setup(dtype, arg)
    m = shape[0] if shape else n
    b = torch.ones((n, cols), dtype=dt, device=device) if cols else torch.ones(n, dtype=dt, device=device)

    def fn(base, positions, values):
        a = _to(matrix(base, positions, values, rows=m), dt, device)
        out = _out(torch.mm(a, b) if cols else torch.mv(a, b))
        return (out if out.ndim == 1 else out[:, 0])[: len(positions)]

    fn.batch = m
    fn.may_fuse = device != "cpu"
    return fn


def gemv(n, dtype, shape, arg):
    """`torch.mv(A, ones)` with A of M x K (K = n): one query per row."""
    return _matrix(n, dtype, shape, arg, 0)


def gemm(n, dtype, shape, arg):
    """`torch.mm(A, B)`, B = ones of K x N: column 0 holds one sum per row."""
    return _matrix(n, dtype, shape, arg, shape[1] if shape else n)
