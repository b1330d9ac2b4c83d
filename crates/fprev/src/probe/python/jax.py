"""JAX on the CPU as a black box: sum, dot, gemv, gemm, each jitted once."""

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402

from fprev_bridge import np_dtype  # noqa: E402


def _black_box(f, rows=None):
    jf = jax.jit(f)

    def fn(x):
        return jf(x)

    if rows is not None:
        fn.rows = rows
    fn.may_fuse = False
    return fn


def sum(n, dtype, shape, arg):
    """`jnp.sum` of a 1-D array."""
    return _black_box(jnp.sum)


def dot(n, dtype, shape, arg):
    """`jnp.dot(x, ones)`."""
    ones = jnp.ones(n, dtype=np_dtype(dtype))
    return _black_box(lambda x: jnp.dot(x, ones))


def gemv(n, dtype, shape, arg):
    """`A @ ones` with A of M x K (K = n): one sum per row."""
    ones = jnp.ones(n, dtype=np_dtype(dtype))
    return _black_box(lambda a: a @ ones, shape[0] if shape else n)


def gemm(n, dtype, shape, arg):
    """`A @ B`, B = ones of K x N: column 0 holds one sum per row of A."""
    cols = shape[1] if shape else n
    b = jnp.ones((n, cols), dtype=np_dtype(dtype))
    return _black_box(lambda a: (a @ b)[:, 0], shape[0] if shape else n)
