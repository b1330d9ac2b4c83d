"""JAX on the CPU as a black box: sum, dot, gemv, gemm, each jitted once."""

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402

from fprev_bridge import follow, np_dtype  # noqa: E402


def _black_box(f, rows=None, weights=None):
    """f jitted once; with `weights` (a `follow` of the operand built from
    fn.weights), f(x, operand)."""
    jf = jax.jit(f)

    if weights is None:
        def fn(x):
            return jf(x)
    else:
        def fn(x):
            return jf(x, weights())

    if rows is not None:
        fn.rows = rows
    fn.may_fuse = False
    return fn


def sum(n, dtype, shape, arg):
    """`jnp.sum` of a 1-D array."""
    return _black_box(jnp.sum)


def _weighted(n, dtype, f, rows=None, cols=None):
    """A black box f(x, operand) whose operand is the weights w (ones but
    for fprev's dot calls), or w in each of `cols` columns. The operand is
    an argument, not a constant folded into the jitted code, and is copied
    to the device again only when fprev changes w."""
    w = np.ones(n, dtype=np_dtype(dtype))
    if cols is None:
        operand = follow(w, jnp.array)
    else:
        operand = follow(w, lambda w: jnp.array(np.broadcast_to(w[:, None], (n, cols))))
    fn = _black_box(f, rows, operand)
    fn.weights = w
    return fn


def dot(n, dtype, shape, arg):
    """`jnp.dot(x, w)`, w = ones but for fprev's dot calls."""
    return _weighted(n, dtype, jnp.dot)


def gemv(n, dtype, shape, arg):
    """`A @ w` with A of M x K (K = n), w as for `dot`: one sum per row."""
    return _weighted(n, dtype, lambda a, w: a @ w, shape[0] if shape else n)


def gemm(n, dtype, shape, arg, column=0):
    """`A @ B`, B of K x N holding w (as for `dot`) in every column: column
    `column` (0) holds one sum per row of A."""
    cols = shape[1] if shape else n
    return _weighted(n, dtype, lambda a, b: (a @ b)[:, column], shape[0] if shape else n, cols)


def _facts():
    """jaxlib's version and the backend the black boxes run on."""
    import jaxlib

    return {"jaxlib": jaxlib.__version__, "backend": jax.default_backend()}
