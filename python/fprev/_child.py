"""What a fresh process of this interpreter runs for the package, where a
library reads its environment as it loads (``fprev.invariance(env=...)``)
or an order is chosen as a process starts (``fprev.reveal(processes=P)``):
the library's own functions, called with one request, JSON in
``argv[2]``, answering JSON on stdout. A bad request ends with exit status
2, anything else that fails with 3, each with why as its last line on
stderr."""

import json
import os
import signal
import sys

from . import _fprev


def _end(signum: int, frame: object) -> None:
    """Ends this process and what it started (its process group, which
    the parent made its own): SIGTERM from the parent, or from the kernel
    where the parent was killed, and SIGHUP."""
    signal.signal(signum, signal.SIG_IGN)
    os.killpg(0, signum)
    os._exit(128 + signum)


def main(kind: str, request: str) -> None:
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _end)
    r = json.loads(request)
    try:
        if kind == "study":
            # One environment's study: what one process turns, here.
            study = _fprev.invariance(r.pop("spec"), r.pop("n"), r.pop("dtype"), r.pop("label"), one_process=True, **r)
            out = study.to_json()
        else:
            out = json.dumps(_answers(r))
    except (ValueError, TypeError) as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    except Exception as e:
        print(e, file=sys.stderr)
        sys.exit(3)
    sys.stdout.write(out)


def _answers(r: dict) -> list:
    """The bits of the answers of ``r``'s function (``path``, ``func``: a
    function at the top level of a .py file, opened as the library opens
    ``python:PATH.py:FUNC``) to the seeded random inputs
    ``fprev.reveal(processes=P)`` compares."""
    spec = "python:%s:%s" % (r.pop("path"), r.pop("func"))
    r.pop("label")
    got = _fprev.answers(spec, r.pop("n"), r.pop("dtype"), **r)
    if got is None:
        raise RuntimeError("its answers vary within a fresh process, from call to call")
    return got
