"""Every process and temporary file ``fprev.invariance(env=…)`` and the
``fprev`` console script start end with them, on SIGINT (Ctrl-C, to the
interpreter alone or to its process group) and SIGTERM: the child process
of each environment is told to end as a terminal would tell it, so that
it and what it started end. The processes are found by an environment
variable this test sets, which every process under the interpreter
inherits."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

MARK = "FPREV_TEST_PY_SIGNALS"

#: A black box that starts a worker of its own, in its process group (as
#: a box's thread pool or helper would), then hangs in its call.
SLOW = textwrap.dedent(
    """
    import subprocess, time

    def f(x):
        subprocess.Popen(["sleep", "100"])
        time.sleep(100)
        return x.sum()
    """
)

INVARIANCE = "import sys, fprev; fprev.invariance(sys.argv[1], 8, env={'FPREV_TEST_KNOB': ['1', '2']})"
CONSOLE = "import sys; from fprev._cli import main; sys.argv[0] = 'fprev'; main()"


def marked(mark):
    """The ids of the live processes whose environment holds ``MARK=mark``
    (a zombie's environment reads empty)."""
    wanted = ("%s=%s" % (MARK, mark)).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as f:
                if wanted in f.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            pass
    return found


def names(pids):
    said = []
    for pid in pids:
        try:
            with open("/proc/%d/comm" % pid) as f:
                said.append(f.read().strip())
        except OSError:
            pass
    return said


def ends_with_everything(tmp_path, argv, signum, group, expect, ready=lambda names: "sleep" in names):
    """Runs ``argv`` (a Python process) in a group of its own with a fresh
    ``TMPDIR``; once ``ready`` says its processes' names show it at work
    (by default: the box's worker, ``sleep``, runs), sends ``signum`` to
    it (``group``: to its group), and asserts it ends as ``expect`` says
    and, half a second after, that no process it started is left and its
    temporary directory is empty."""
    mark = "%d-%d-%s" % (os.getpid(), signum, group)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    log = tmp_path / "stderr"
    env = dict(os.environ, **{MARK: mark, "TMPDIR": str(tmp)})
    with open(log, "w") as err:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        started = time.monotonic()
        while not ready(names(marked(mark))):
            assert proc.poll() is None, "ended early: %s" % log.read_text()
            assert time.monotonic() - started < 30, "never at work: %s" % log.read_text()
            time.sleep(0.02)
        time.sleep(0.3)
        before = names(marked(mark))
        if group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        status = proc.wait(timeout=20)
        assert status in expect, "%d: %s" % (status, log.read_text())
        ended = time.monotonic()
        while marked(mark):
            left = names(marked(mark))
            assert time.monotonic() - ended < 0.5, "left running: %s (of %s); %s" % (left, before, log.read_text())
            time.sleep(0.02)
        assert list(tmp.iterdir()) == []
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# SIGINT: KeyboardInterrupt, or the interpreter ending by SIGINT.
SIGNALS = [
    (signal.SIGINT, False, (1, -signal.SIGINT)),
    (signal.SIGTERM, False, (-signal.SIGTERM,)),
    (signal.SIGINT, True, (1, -signal.SIGINT)),
]


@pytest.mark.parametrize("signum,group,expect", SIGNALS)
def test_the_process_of_each_environment_ends_with_invariance(tmp_path, signum, group, expect):
    box = tmp_path / "slow.py"
    box.write_text(SLOW)
    argv = [sys.executable, "-c", INVARIANCE, "python:%s:f" % box]
    ends_with_everything(tmp_path, argv, signum, group, expect)


@pytest.mark.parametrize("signum,group,expect", SIGNALS)
def test_the_console_script_ends_with_everything_it_started(tmp_path, signum, group, expect):
    box = tmp_path / "slow.py"
    box.write_text(SLOW)
    argv = [sys.executable, "-c", CONSOLE, "invariance", "python:%s:f" % box, "-n", "8", "--env", "FPREV_TEST_KNOB=1,2"]
    expect = (130,) if signum == signal.SIGINT else expect
    ends_with_everything(tmp_path, argv, signum, group, expect)


def test_the_process_of_an_environment_ends_when_the_interpreter_is_killed(tmp_path):
    # SIGKILL leaves the interpreter no time: the kernel tells the child
    # that studies the environment, which ends its group (the box's worker
    # too).
    box = tmp_path / "slow.py"
    box.write_text(SLOW)
    argv = [sys.executable, "-c", INVARIANCE, "python:%s:f" % box]
    # The interpreter, its child and the box's worker.
    ends_with_everything(tmp_path, argv, signal.SIGKILL, False, (-signal.SIGKILL,), ready=lambda names: len(names) == 3)


def test_an_exception_while_an_environment_runs_ends_its_process(tmp_path):
    # The caller's own SIGTERM handler raises SystemExit in the wait: the
    # child is told to end (SIGTERM), not killed alone.
    box = tmp_path / "slow.py"
    box.write_text(SLOW)
    script = "import signal, sys; signal.signal(signal.SIGTERM, lambda *a: sys.exit(3)); " + INVARIANCE
    argv = [sys.executable, "-c", script, "python:%s:f" % box]
    ends_with_everything(tmp_path, argv, signal.SIGTERM, False, (3,))
