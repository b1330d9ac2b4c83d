"""JAX on the CPU as a black box: sum, dot, gemv, gemm, each jitted once."""

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from fprev_bridge import inputs, matrix, np_dtype  # noqa: E402


def _rowwise(n, dtype, f, batch=4096):
    """A black box applying the jitted `f` to each input (one real call each)."""
    dt = np_dtype(dtype)
    jf = jax.jit(f)

    def fn(base, positions, values):
        return [np.asarray(jf(a)).astype(np.float64) for a in inputs(base, positions, values, dt)]

    fn.batch = batch
    fn.may_fuse = False
    return fn


def sum(n, dtype, shape, arg):
    """`jnp.sum` of a 1-D array."""
    return _rowwise(n, dtype, jnp.sum)


def dot(n, dtype, shape, arg):
    """`jnp.dot(x, ones)`."""
    ones = jnp.ones(n, dtype=np_dtype(dtype))
    return _rowwise(n, dtype, lambda r: jnp.dot(r, ones))


def _matrix(n, dtype, shape, make_b):
    dt = np_dtype(dtype)
    m = shape[0] if shape else n
    b = make_b(dt)
    f = jax.jit(lambda a: a @ b)

    def fn(base, positions, values):
        out = np.asarray(f(matrix(base, positions, values, dt, m))).astype(np.float64)
        return (out if out.ndim == 1 else out[:, 0])[: len(positions)]

    fn.batch = m
    fn.may_fuse = False
    return fn


def gemv(n, dtype, shape, arg):
    """`A @ ones` with A of M x K (K = n): one query per row."""
    return _matrix(n, dtype, shape, lambda dt: jnp.ones(n, dtype=dt))


def gemm(n, dtype, shape, arg):
    """`A @ B`, B = ones of K x N: column 0 holds one sum per row of A."""
    cols = shape[1] if shape else n
    return _matrix(n, dtype, shape, lambda dt: jnp.ones((n, cols), dtype=dt))
