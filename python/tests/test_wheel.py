"""The wheel from scripts/wheel.sh: one abi3 wheel, installed by pip into a
clean virtualenv (no system packages: pip brings NumPy; no cargo or rustc
on PATH), gives both ``import fprev`` and the ``fprev`` command, which runs
in that virtualenv's interpreter and sees its packages."""

import pathlib
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def run(*args, **kwargs):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, "%s failed (exit %d):\n%s%s" % (
        " ".join(map(str, args)),
        done.returncode,
        done.stdout[-3000:],
        done.stderr[-3000:],
    )
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    assert shutil.which("maturin"), "maturin is not installed: python3 -m pip install maturin (scripts/test.sh does)"
    out = tmp_path_factory.mktemp("wheels")
    run("bash", REPO / "scripts" / "wheel.sh", out)
    (wheel,) = out.glob("fprev-*.whl")
    return wheel


def test_the_wheel_is_one_abi3_manylinux_wheel_with_the_command(wheel):
    # name-version-python-abi-platform.whl
    _, _, python, abi, platform = wheel.stem.split("-")
    assert (python, abi) == ("cp39", "abi3"), wheel.name
    assert platform.startswith("manylinux_") and platform.endswith("_x86_64"), wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        text = z.read(entry_points).decode().replace(" ", "")
    assert any(n.startswith("fprev/_fprev.abi3") for n in names), names
    assert "[console_scripts]\nfprev=fprev._cli:main" in text, text
    assert "[pytest11]\nfprev=fprev.pytest_plugin" in text, text


def clean_venv(python, where):
    """A virtualenv of `python` without system packages, the wheel in it."""
    run(python, "-m", "venv", where)
    return where / "bin"


def interpreters():
    """This interpreter, and another CPython of a different minor version
    where the machine has one (pyenv's), to show the one abi3 wheel serves both."""
    found = [sys.executable]
    root = pathlib.Path.home() / ".pyenv" / "versions"
    mine = "%d.%d" % sys.version_info[:2]
    for version in sorted(root.glob("3.1[2-9]*")) if root.is_dir() else []:
        if not version.name.startswith(mine):
            found.append(str(version / "bin" / "python"))
            break
    return found


@pytest.mark.parametrize("python", interpreters())
def test_the_wheel_installs_without_rust_and_runs_the_command_there(wheel, python, tmp_path):
    bin_dir = clean_venv(python, tmp_path / "venv")
    # No Rust toolchain on PATH: the install must not compile anything.
    env = {"HOME": str(tmp_path), "PATH": "%s:/usr/bin:/bin" % bin_dir, "LANG": "C.UTF-8"}
    assert shutil.which("cargo", path=env["PATH"]) is None
    assert shutil.which("rustc", path=env["PATH"]) is None
    run(bin_dir / "pip", "install", "--quiet", "--disable-pip-version-check", wheel, env=env)

    # The command, in that environment's interpreter: its NumPy.
    out = run(bin_dir / "fprev", "reveal", "numpy:sum", "-n", "64", "--format", "json", env=env, cwd=tmp_path)
    assert '"n": 64' in out and '"probe": "numpy:sum"' in out, out
    script = tmp_path / "mysum.py"
    script.write_text("def left_to_right(x):\n    s = x[0]\n    for v in x[1:]:\n        s = s + v\n    return s\n")
    out = run(bin_dir / "fprev", "reveal", "python:%s:left_to_right" % script, "-n", "8", env=env, cwd=tmp_path)
    assert out.startswith("(((((((0+1)+2)+3)+4)+5)+6)+7)"), out
    # The interpreter the command ran in is the virtualenv's own.
    where = run(bin_dir / "python", "-c", "import sys; print(sys.prefix)", env=env)
    assert where.strip() == str(tmp_path / "venv")

    # The package, from the virtualenv, not the source tree.
    out = run(
        bin_dir / "python",
        "-c",
        textwrap.dedent(
            """
            import numpy as np, fprev
            tree = fprev.reveal(np.sum, 64)
            assert fprev.check(tree, np.sum, trials=20)
            print(fprev.__file__)
            print(tree.n)
            """
        ),
        env=env,
        cwd=tmp_path,
    )
    location, n = out.split()
    assert location.startswith(str(tmp_path / "venv")) and n == "64"
