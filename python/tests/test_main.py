"""``python -m fprev`` runs the command as the ``fprev`` console script does:
the same tree and status, and a usage error's status (2) with clap's message
naming the program as it was run."""

import subprocess
import sys

CONSOLE = "import sys; from fprev._cli import main; sys.argv[0] = 'fprev'; main()"


def python_m_fprev(*args):
    return subprocess.run([sys.executable, "-m", "fprev", *args], capture_output=True, text=True)


def console(*args):
    return subprocess.run([sys.executable, "-c", CONSOLE, *args], capture_output=True, text=True)


def test_it_reveals_as_the_console_script_does():
    args = ("reveal", "native:sequential", "-n", "8")
    done = python_m_fprev(*args)
    assert done.returncode == 0, done.stderr
    tree = done.stdout.splitlines()[0]
    assert tree == "(((((((0+1)+2)+3)+4)+5)+6)+7)", done.stdout
    script = console(*args)
    assert script.returncode == 0, script.stderr
    assert script.stdout.splitlines()[0] == tree


def test_bad_arguments_exit_with_the_usage_status():
    done = python_m_fprev("reveal", "--no-such-flag")
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("error: unexpected argument '--no-such-flag'"), done.stderr
    assert "Usage: python -m fprev reveal" in done.stderr, done.stderr
    assert console("reveal", "--no-such-flag").returncode == 2


def test_its_version_line_is_the_command_s():
    done = python_m_fprev("-V")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("fprev "), done.stdout
