"""Command line: ``attncoda run``, ``attncoda book``, ``attncoda chapters``."""

from __future__ import annotations

import argparse
import json
import sys

from .chapters import CHAPTERS, ChapterError


def parse_value(text: str):
    """A parameter value from the command line: JSON when it parses (numbers, true/false, lists), else the string."""
    aliases = {"True": True, "False": False, "None": None}
    if text in aliases:
        return aliases[text]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attncoda", description="Attention rows as compositional data: run the book's chapters.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one chapter with papermill")
    run.add_argument("chapter", help=f"one of: {', '.join(CHAPTERS)} (or its number)")
    run.add_argument("--model", help="model for a per-model chapter: a short name, a Hugging Face id, a local directory or a .gguf file")
    run.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"), help="set a notebook parameter (repeatable)")
    run.add_argument("--output", help="where to write the executed notebook")
    run.add_argument("--profile", choices=("full", "small"), default="full", help="small: the quick sizes the tests use")

    book = sub.add_parser("book", help="run every chapter and build the website into _build/html")
    book.add_argument("--profile", choices=("full", "small"), default="full")
    book.add_argument("--no-run", action="store_true", help="render the notebooks already executed, without rerunning them")

    sub.add_parser("chapters", help="list the chapters")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "chapters":
            for c in CHAPTERS.values():
                print(f"{c.key:<16} notebooks/{c.notebook}.ipynb  {'per model' if c.per_model else c.default_model}")
        elif args.command == "run":
            from .chapters import run_chapter

            params = {name: parse_value(value) for name, value in args.parameter}
            path = run_chapter(args.chapter, model=args.model, parameters=params, output=args.output, profile=args.profile)
            print(f"executed notebook: {path}")
        elif args.command == "book":
            from .book import build_book

            html = build_book(profile=args.profile, run=not args.no_run)
            print(f"book built: {html / 'index.html'}")
    except (ChapterError, ValueError, FileNotFoundError) as err:
        print(f"attncoda: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("attncoda: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
