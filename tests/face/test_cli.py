import subprocess
import sys

import pytest

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


BAD_INPUTS = [
    (["run", "theory", "-p", "nosuchparam", "1"], "chapter 'theory' has no parameter 'nosuchparam'; its parameters are: model, seed"),
    (["run", "theory", "-p", "seed", "abc"], "chapter 'theory': parameter seed = 'abc' must be a whole number"),
    (["run", "theory", "-p", "seed", "-1"], "chapter 'theory': parameter seed = -1 must not be negative"),
    (["run", "measurement", "-p", "seeds", "3"], "chapter 'measurement': parameter seeds = 3 must be a non-empty list such as [0, 1]"),
    (["run", "measurement", "-p", "n", "0"], "chapter 'measurement': parameter n = 0 must be at least 1"),
    (["run", "pruning", "-p", "seeds", "[0, -2]"], "chapter 'pruning': parameter seeds = [0, -2] must be a list of non-negative whole numbers"),
    (["run", "theory", "--model", "gpt2"], "chapter 'theory' does not take a model"),
    (["run", "nope"], "unknown chapter 'nope'"),
    (["run", "collapse", "--model", "minilm-l6"], "'minilm-l6' is one model, not a series"),
    (["run", "collapse", "--model", "EleutherAI/pythia-70m@step1000"], "names one revision; drop '@step1000'"),
    (["run", "collapse", "--model", "./nowhere/step0,./nowhere/step1"], "no such model folder or file"),
    (["models", "--install", "nosuch"], "unknown model 'nosuch' for --install; the offline models are: minilm-l6"),
]


@pytest.mark.slow  # over 3 s: make test runs it, make check leaves it (held under 120 s in CI)
def test_bad_input_is_one_line_that_names_the_value_before_anything_starts():
    """A table of what a new user types wrong: every answer is one line, names the bad value, and no kernel or model starts."""
    for argv, expected in BAD_INPUTS:
        done = subprocess.run([sys.executable, "-m", "attncoda.face.cli", *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, argv
        assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr, (argv, done.stderr)
        assert expected in done.stderr, (argv, done.stderr)


@pytest.mark.slow  # over 3 s: make test runs it, make check leaves it (held under 120 s in CI)
def test_an_unreachable_scheduler_is_one_line_after_any_notes():
    """``book --scheduler`` with nobody listening is one line naming the address, said before any chapter is
    planned (so before the notes on which offline models a small book leaves out, or the refusal of a chapter that
    has none of its models installed here)."""
    done = subprocess.run([sys.executable, "-m", "attncoda.face.cli", "book", "--profile", "small", "--scheduler", "tcp://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in done.stderr, done.stderr


def test_negative_seed_is_refused_by_the_signatures_command_before_loading():
    done = subprocess.run([sys.executable, "-m", "attncoda.face.cli", "signatures", "--model", "minilm-l6", "--seed", "-1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "argument --seed: -1 is negative; use 0 or more" in done.stderr


def test_main_is_a_table_of_subcommands():
    """Every subcommand the parser knows has its function in COMMANDS, and main only parses, settles and dispatches."""
    import argparse
    import ast
    import inspect

    from attncoda.face import cli

    subparsers = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subparsers.choices) == set(cli.COMMANDS)
    main = next(n for n in ast.parse(inspect.getsource(cli)).body if isinstance(n, ast.FunctionDef) and n.name == "main")
    assert main.end_lineno - main.lineno + 1 <= 30
