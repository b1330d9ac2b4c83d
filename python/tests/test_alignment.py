"""Offsets for Python callables: NumPy buffers an unaligned array in chunks
of 8,192 elements, so ``np.sum`` of a float32 view one byte past an aligned
address has another tree at n = 20,000. ``reveal``, ``explain``, ``check``,
``sweep`` and ``emit`` take ``offset=`` as the command line's ``--offset``
(it was a ``TypeError``), bounded with a ``ValueError``, and a tree records
the offset it holds for."""

import numpy as np
import pytest

import fprev


def test_a_callable_is_handed_its_input_at_an_offset_and_the_tree_records_it():
    aligned = fprev.reveal(np.sum, 20000)
    unaligned = fprev.reveal(np.sum, 20000, offset="1B")
    assert aligned.offset is None and unaligned.offset == "1B"
    assert aligned != unaligned
    assert fprev.Tree.from_json(unaligned.to_json()).offset == "1B"
    # Checked where it was found, unless told otherwise.
    assert fprev.check(unaligned, np.sum, 20)
    assert not fprev.check(unaligned, np.sum, 20, offset=0)
    assert fprev.check(aligned, np.sum, 20, offset=16)
    # An element offset: 1 float32 element is 4 bytes, which NumPy sums
    # as an aligned array.
    assert fprev.reveal(np.sum, 20000, offset=1) == aligned
    explained = fprev.explain(np.sum, range(1, 25), verify=(), offset="3B")
    assert explained.formula is not None
    swept = fprev.sweep(np.sum, [100], offset="1B")
    assert swept.trees[0].offset == "1B"


@pytest.mark.parametrize(
    "call, error, said",
    [
        (lambda: fprev.reveal(np.sum, 64, offset=4097), ValueError, "'4097' is not an offset"),
        (lambda: fprev.reveal(np.sum, 64, offset="5000B"), ValueError, "from 0 to 4096"),
        (lambda: fprev.reveal(np.sum, 64, offset=10**30), ValueError, "is not an offset"),
        (lambda: fprev.reveal(np.sum, 64, offset=-1), ValueError, "is not an offset"),
        (lambda: fprev.reveal(np.sum, 64, offset=1.5), TypeError, "whole number"),
        (lambda: fprev.explain(np.sum, [8], offset="x"), ValueError, "is not an offset"),
        (lambda: fprev.check(fprev.Tree.from_formula("pairwise", 8), np.sum, 5, offset="9999B"), ValueError, "from 0 to 4096"),
        (lambda: fprev.sweep(np.sum, [8], offset=4097), ValueError, "is not an offset"),
        (lambda: fprev.emit("numpy:sum", offset="4097B"), ValueError, "is not an offset"),
    ],
)
def test_offsets_are_bounded_as_the_command_line_bounds_them(call, error, said):
    with pytest.raises(error, match=said):
        call()


def test_emitted_code_matches_np_sum_on_the_alignment_it_was_found_at():
    body = "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))"
    blocks = "blocks(8192, %s, sequential)" % body
    source = fprev.emit("numpy:sum", "python", offset="1B", formula=blocks, check=[8193, 20000])
    assert "This code matches numpy:sum on an input in an array starting 1 byte past" in source
    assert "Checked: compiled and run" in source
    scope = {}
    exec(source, scope)
    ours = scope["numpy_sum_f32"]
    n = 30001
    block = np.zeros(4 * n + 65, dtype=np.uint8)
    start = -block.ctypes.data % 64 + 1
    view = block[start : start + 4 * n].view(np.float32)
    rng = np.random.default_rng(3)
    for _ in range(4):
        view[...] = rng.standard_normal(n).astype(np.float32)
        assert np.float32(ours(view)).tobytes() == np.sum(view).tobytes()
