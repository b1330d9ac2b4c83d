"""The ``fprev`` console script: the command line, run inside this
interpreter, so that ``numpy:``, ``jax:``, ``torch:`` and ``python:``
black boxes are this environment's packages."""

import sys

from . import _fprev


def main() -> None:
    sys.exit(_fprev.main(sys.argv))
