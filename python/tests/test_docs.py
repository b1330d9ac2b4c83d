"""The Python examples of README.md and docs/GUIDE.md, and the package's
docstring (``help(fprev)``), run: a block that
defines pytest tests is run by pytest in a fresh folder (twice, so that a
golden file it pins is written, then enforced); any other block is run as
a script. The command line's examples are run by
crates/fprev-cli/tests/docs.rs."""

import pathlib
import re

import pytest

pytest_plugins = ["pytester"]

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A fenced block whose info string is `python` alone: one with a file name
# after it (```python joins.py) is a file a console example reads.
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def examples():
    for document in ("README.md", "docs/GUIDE.md"):
        text = (ROOT / document).read_text()
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield pytest.param(match.group(1), id=f"{document}:{line}")


@pytest.mark.parametrize("code", list(examples()))
def test_the_example_runs(code, pytester):
    if re.search(r"^def test_", code, re.MULTILINE):
        pytester.makepyfile(test_example=code)
        written = pytester.runpytest_subprocess("-q", "--fprev-update")
        assert written.ret == 0, written.stdout.str()
        enforced = pytester.runpytest_subprocess("-q")
        assert enforced.ret == 0, enforced.stdout.str()
    else:
        exec(compile(code, "example", "exec"), {"__name__": "example"})


def test_help_fprev_runs_as_it_reads():
    import doctest

    import fprev

    failed, tried = doctest.testmod(fprev, optionflags=doctest.ELLIPSIS, verbose=False)
    assert tried >= 4 and failed == 0


def test_every_document_has_examples():
    assert len(list(examples())) >= 3
