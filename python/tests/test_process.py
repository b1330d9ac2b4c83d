"""The ``fprev`` console script runs the command in a child process it waits
for, as the binary does: a black box that ends the process itself is
reported (exit 3), never taken for the command's status."""

import subprocess
import sys
import textwrap

CONSOLE = "import sys; from fprev._cli import main; sys.argv[0] = 'fprev'; main()"


def fprev(*args):
    return subprocess.run([sys.executable, "-c", CONSOLE, *args], capture_output=True, text=True)


def test_a_black_box_calling_os_exit_is_reported(tmp_path):
    box = tmp_path / "quits.py"
    box.write_text("import os\n\ndef f(x):\n    os._exit(0)\n")
    spec = "python:%s:f" % box
    done = fprev("reveal", spec, "-n", "8")
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("fprev: error: %s: " % spec), line
    assert "ended the process" in line, line


def test_a_normal_run_keeps_its_output_and_status(tmp_path):
    box = tmp_path / "sums.py"
    box.write_text(
        textwrap.dedent(
            """
            def f(x):
                s = x[0]
                for v in x[1:]:
                    s = s + v
                return s
            """
        )
    )
    done = fprev("reveal", "python:%s:f" % box, "-n", "4", "--no-arith")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "(((0+1)+2)+3)"


def test_the_timeout_covers_a_module_that_hangs_at_import(tmp_path):
    box = tmp_path / "slow.py"
    box.write_text("import time\ntime.sleep(100)\n\ndef f(x):\n    return x.sum()\n")
    done = fprev("reveal", "python:%s:f" % box, "-n", "8", "--timeout", "1")
    assert done.returncode == 3, done.stderr
    assert "--timeout 1 s" in done.stderr
