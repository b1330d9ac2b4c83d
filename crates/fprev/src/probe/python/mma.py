"""GPU matrix instructions, simulated bit for bit by MMA-Sim (`pip install
mmasim`): `mma:ARCH:INSTRUCTION`, e.g. `mma:hopper:m16n8k16.f32.f16.f16.f32`,
`mma:hopper:wgmma.m64n8k16.f32.f16.f16`, `mma:blackwell:tcgen05.m64n8k16.f32.f16.f16`,
`mma:cdna3:f32_16x16x16_f16`.

The black box is one output element of the instruction chained along K, as
a cuBLAS or CUTLASS main loop runs it: D = A[:, 0:k] B[0:k, :] + C, then
that D as the next C, k columns at a time (C = 0 at the start; the last
step's columns past n are zero). fprev chooses both operands (`fn.weights`
is B's column), so each summand is a product, which the instruction forms
exactly; one that A's format alone cannot hold (an fp8 input's mask) is
split into an A value and a power of two of B's (`fn.operands`). With
n <= k it is one instruction: its own dot product."""

import numpy as np
import torch

from fprev_bridge import np_dtype

# fprev's names of the architectures, and MMA-Sim's.
_NVIDIA = {
    "volta": "Volta",
    "turing": "Turing",
    "ampere": "Ampere",
    "ada": "Ada Lovelace",
    "hopper": "Hopper",
    "blackwell": "Blackwell",
    "rtx_blackwell": "RTX Blackwell",
}
_AMD = {"cdna1": "CDNA1", "cdna2": "CDNA2", "cdna3": "CDNA3"}

# The fprev dtype each instruction's A type is given as.
_DTYPE = {
    torch.float64: "f64",
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float8_e4m3fn: "e4m3",
    torch.float8_e5m2: "e5m2",
}
_RESULT = {torch.float64: "f64", torch.float32: "f32", torch.float16: "f16"}
_TORCH = {"f64": torch.float64, "f32": torch.float32, "tf32": torch.float32, "f16": torch.float16}
# bf16 and fp8 values travel as their bits (torch.from_numpy knows no
# ml_dtypes types): the unsigned integer of their width, and the type.
_BITS = {
    "bf16": (np.uint16, torch.bfloat16),
    "e4m3": (np.uint8, torch.float8_e4m3fn),
    "e5m2": (np.uint8, torch.float8_e5m2),
}

# FP6 and FP4 formats: what they are, and how far a product of two reaches.
_NARROW = {
    "e2m1": ("FP4", "0.25 to 36"),
    "e2m3": ("FP6", "2^-6 to 56.25"),
    "e3m2": ("FP6", "2^-8 to 784"),
}

# Rows one call sums: a batch of dot products is one tensor operation.
_ROWS = 256


def _instructions(arch):
    """Every instruction MMA-Sim simulates on `arch` (fprev's name), as
    `mma:` spells them: mma's bare, wgmma's and tcgen05's prefixed."""
    if arch in _AMD:
        from mmasim.amd import isa_mfma

        table = {"CDNA1": isa_mfma.cdna1_mfma_suffix, "CDNA2": isa_mfma.cdna2_mfma_suffix,
                 "CDNA3": isa_mfma.cdna3_mfma_suffix}
        return list(table[_AMD[arch]])
    from mmasim.nv_ptx import isa_mma, isa_tcgen05mma, isa_wgmma

    name = _NVIDIA[arch]
    out = list(isa_mma.mma_shape_and_type.get(name, []))
    out += ["wgmma." + s for s in isa_wgmma.wgmma_shape_and_type.get(name, [])]
    out += ["tcgen05." + s for s in isa_tcgen05mma.tcgen05mma_shape_and_type.get(name, [])]
    return out


def _block_scaled(arch):
    from mmasim.nv_ptx import isa_mma, isa_tcgen05mma

    name = _NVIDIA.get(arch)
    return list(isa_mma.mma_block_scale_shape_and_type.get(name, [])) + [
        "tcgen05." + s for s in isa_tcgen05mma.tcgen05mma_block_scale_shape_and_type.get(name, [])
    ]


def _summary(names):
    """The instructions, shortened where wgmma and tcgen05 repeat one type
    for every N: `wgmma.m64n{8..256}k16.f32.f16.f16`."""
    import re

    out, seen = [], set()
    for s in names:
        m = re.match(r"^(wgmma|tcgen05)\.m(\d+)n(\d+)k(\d+)\.(.*)$", s)
        if m:
            key = "%s.m%sn{8..256}k%s.%s" % (m.group(1), m.group(2), m.group(4), m.group(5))
            if key not in seen:
                seen.add(key)
                out.append(key)
        else:
            out.append(s)
    return ", ".join(out)


def _open(arch, instruction):
    if not instruction:
        raise LookupError("mma:%s needs an instruction, mma:%s:INSTRUCTION; %s offers: %s"
                          % (arch, arch, arch, _summary(_instructions(arch))))
    if arch in _NVIDIA and instruction in _block_scaled(arch):
        raise LookupError("%s is block-scaled (MX): fprev does not yet choose block scales, "
                          "so it cannot be revealed; the other instructions can" % instruction)
    if instruction not in _instructions(arch):
        raise LookupError("no instruction '%s' on %s; it offers: %s"
                          % (instruction, arch, _summary(_instructions(arch))))
    if arch in _AMD:
        from mmasim.amd import MFMA

        return MFMA(_AMD[arch], instruction)
    from mmasim.nv_ptx import MMA, TCGen05MMA, WGMMA

    kind, _, rest = instruction.partition(".")
    make = {"wgmma": WGMMA, "tcgen05": TCGen05MMA}.get(kind)
    if make is None:
        return MMA(_NVIDIA[arch], instruction)
    return make(_NVIDIA[arch], rest)


# The exponents of the powers of two each format holds, subnormal to largest.
_POWERS = {"f64": (-1074, 1023), "f32": (-149, 127), "tf32": (-136, 127), "f16": (-24, 15),
           "bf16": (-133, 127), "e4m3": (-9, 8), "e5m2": (-16, 15)}


def _holds(v, name):
    """Which of the f64 values `v` the format `name` holds exactly."""
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "tf32":
            f = v.astype(np.float32)
            return (f.astype(np.float64) == v) & (f.view(np.uint32) & 0x1FFF == 0)
        return np.asarray(v, dtype=np_dtype(name)).astype(np.float64) == v


def _split(x, w, a, b):
    """The operands whose products are `x * w`: `x` and `w` where they are
    values of `a` and `b`, else the product as `(p / y, y)`, `y` the power
    of two of `b` nearest 1 that leaves `p / y` a value of `a`."""
    x = np.array(x, dtype=np.float64)
    y = np.array(np.broadcast_to(w, x.shape), dtype=np.float64)
    bad = ~(_holds(x, a) & _holds(y, b))
    if bad.any():
        p = x[bad] * y[bad]
        px, py = np.full(p.shape, np.nan), np.full(p.shape, np.nan)
        lo, hi = _POWERS[b]
        for e in sorted(range(lo, hi + 1), key=abs):
            todo = np.isnan(px)
            if not todo.any():
                break
            cand = p / 2.0**e
            ok = todo & _holds(cand, a) & (cand * 2.0**e == p)
            px[ok], py[ok] = cand[ok], 2.0**e
        if np.isnan(px).any():
            v = p[np.isnan(px)][0]
            raise ValueError("%r is no product of a %s value and a power of two of %s" % (v, a, b))
        x[bad], y[bad] = px, py
    return x, y


def _tensor(v, name, width):
    """The f64 values `v` (rows x n, each one of format `name`) as a tensor
    of the operand's type, `width` columns, zero past n."""
    bits, typ = _BITS.get(name, (None, _TORCH.get(name)))
    out = torch.zeros(v.shape[0], width, dtype=typ)
    if bits is None:
        out[:, :v.shape[1]] = torch.from_numpy(v.astype(np_dtype(name)))
    else:
        raw = torch.from_numpy(v.astype(np_dtype(name)).view(bits))
        out.view(raw.dtype)[:, :v.shape[1]] = raw
    return out


def _operand(op, arg, side):
    """The fprev format of operand `side` ("a" or "b") of `op`."""
    typ = getattr(op, side + "_type", None)
    ptx = getattr(op, side + "_type_ptx", None)
    # TF32 (AMD's XF32) inputs come as f32 tensors, which the instruction
    # converts: fprev gives it TF32 values, which the conversion keeps.
    if ptx == "tf32" or arg.endswith("_xf32"):
        return "tf32"
    if typ in (torch.float8_e4m3fnuz, torch.float8_e5m2fnuz):
        raise TypeError("%s takes AMD's FNUZ fp8 (%s), another bias than OCP's e4m3 and e5m2 "
                        "and no negative zero, which fprev has no format for" % (arg, typ))
    if ptx in _NARROW:
        raise TypeError("%s takes %s inputs (%s), which fprev has no format for: FP6 and FP4 "
                        "are not modelled (two of them multiply to %s, too few bits to mask "
                        "an f32 sum)" % ((arg, ptx) + _NARROW[ptx]))
    name = _DTYPE.get(typ)
    if name is None:
        raise TypeError("%s takes %s inputs, which fprev has no format for (its formats: f64 "
                        "f32 tf32 f16 bf16 e4m3 e5m2)" % (arg, ptx or typ))
    return name


def _probe(arch, n, dtype, arg):
    op = _open(arch, arg)
    takes, times = _operand(op, arg, "a"), _operand(op, arg, "b")
    if dtype != takes:
        raise TypeError("%s takes %s inputs: give it the input format %s" % (arg, takes, takes))
    k = op.k
    steps = -(-n // k)
    c_type = op.c_type
    # Summands are products of an A and a B value, which fprev writes as
    # f64 (inputs and weights) and this splits.
    w = np.ones(n, dtype=np.float64)

    def fn(X):
        # Rows past the last that holds an input are zero: not simulated.
        live = np.flatnonzero(X.reshape(X.shape[0], -1).any(axis=1))
        rows = live[-1] + 1 if len(live) else 1
        x, y = _split(X[:rows], w, takes, times)
        a, b = _tensor(x, takes, steps * k), _tensor(y, times, steps * k)
        c = torch.zeros(rows, dtype=c_type)
        for s in range(0, steps * k, k):
            c = op.dpa(a[:, s:s + k], b[:, s:s + k], c)
        out = np.zeros(X.shape[0])
        out[:rows] = c.to(torch.float64).numpy()
        return out

    fn.rows = _ROWS
    fn.weights = w
    fn.operands = (takes, times)
    fn.accumulator = _RESULT[c_type]
    fn.result = _RESULT[op.d_type]
    return fn


def _factory(arch):
    def make(n, dtype, shape, arg):
        return _probe(arch, n, dtype, arg)

    make.__name__ = arch
    make.__doc__ = "An instruction of %s, chained along K." % arch
    return make


for _arch in list(_NVIDIA) + list(_AMD):
    globals()[_arch] = _factory(_arch)
del _arch


def _members():
    """Every instruction MMA-Sim simulates, as `mma:` specs; block-scaled
    ones are listed by `mma:ARCH`'s error, not here, as they cannot be
    revealed yet."""
    return ["mma:%s:%s" % (arch, s) for arch in list(_NVIDIA) + list(_AMD) for s in _instructions(arch)]


def _facts():
    """MMA-Sim's version, which decides every simulated instruction's bits."""
    import importlib.metadata

    return {"mmasim": importlib.metadata.version("mmasim"), "torch": torch.__version__}
