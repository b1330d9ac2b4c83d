"""``python -m fprev``: the ``fprev`` command as the console script runs it,
inside this interpreter, for an environment whose scripts folder is not on
PATH (or to pick the interpreter: ``python3.12 -m fprev``)."""

import sys

from ._cli import main

if __name__ == "__main__":
    # clap names the program after argv[0], here this file's path.
    sys.argv[0] = "python -m fprev"
    main()
