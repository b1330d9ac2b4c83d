"""The wheel from `maturin build` installs into a clean virtualenv (no
system packages: pip brings NumPy) and works there."""

import pathlib
import shutil
import subprocess
import sys
import textwrap

PYTHON_DIR = pathlib.Path(__file__).resolve().parents[1]


def run(*args, **kwargs):
    done = subprocess.run(args, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, "%s failed:\n%s%s" % (" ".join(map(str, args)), done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


def test_the_wheel_installs_into_a_clean_virtualenv(tmp_path):
    maturin = shutil.which("maturin")
    assert maturin, "maturin is not installed: python3 -m pip install maturin (scripts/test.sh does)"
    wheels = tmp_path / "wheels"
    run(maturin, "build", "--release", "--quiet", "-m", str(PYTHON_DIR / "Cargo.toml"), "-o", str(wheels))
    (wheel,) = wheels.glob("fprev-*.whl")

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", str(venv))
    python = venv / "bin" / "python"
    run(str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel))
    out = run(
        str(python),
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
        cwd=str(tmp_path),
    )
    location, n = out.split()
    # Imported from the virtualenv, not from the source tree.
    assert location.startswith(str(venv)) and n == "64"
