import subprocess
import sys

from attncoda.face.cli import main, parse_value


def test_parameter_values_are_typed():
    assert parse_value("5") == 5 and parse_value("0.5") == 0.5 and parse_value("1e-5") == 1e-5
    assert parse_value("true") is True and parse_value("False") is False
    assert parse_value("gpt2") == "gpt2" and parse_value("EleutherAI/pythia-70m@step1000") == "EleutherAI/pythia-70m@step1000"


def test_chapters_lists_every_chapter(capsys):
    assert main(["chapters"]) == 0
    out = capsys.readouterr().out
    assert "theory" in out and "calibration" in out


def test_errors_are_one_line_without_a_traceback():
    done = subprocess.run([sys.executable, "-m", "attncoda.face.cli", "run", "nope"], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "unknown chapter" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_model_fails_before_any_kernel_starts():
    done = subprocess.run([sys.executable, "-m", "attncoda.face.cli", "run", "measurement", "--model", "./no-such-folder"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == "attncoda: error: no such model folder or file: no-such-folder"
