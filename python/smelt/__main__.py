"""The ``python -m smelt`` command line: ``plot KIND INPUT --out FILE.png|svg`` and ``check-model CONFIG...``.

Exit codes follow smelt-match's (docs/cli.md): 0 success, 2 bad input (a usage error, a report that cannot be
plotted, an output suffix other than .png or .svg, a config or option check-model refuses), 3 a term whose
measured count differs from smelt's (check-model), 4 a file that cannot be read or written. Errors go to
standard error as ``smelt: error: ...``; nothing is written then. Each command imports its module only when it
runs, so ``python -m smelt`` needs matplotlib only for ``plot`` and torch only for ``check-model``.
"""

from __future__ import annotations

import argparse
import pathlib
import difflib
import sys
from collections.abc import Sequence

EXIT_BAD_INPUT = 2
EXIT_IO = 4


class BadInput(Exception):
    """Bad input found by a command (exit code 2); other exceptions are bugs and keep their traceback."""


def add_plot(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "plot",
        help="plot a smelt-match JSON report (docs/plots.md)",
        description="Plot a JSON report of smelt-match to a .png or .svg file.",
    )
    p.add_argument(
        "kind",
        choices=("mismatch", "frontier", "sweep", "layers"),
        help="mismatch: derive --json; frontier: frontier --json; sweep: sweep --json; layers: count --json",
    )
    p.add_argument("input", help="the report (JSON file)")
    p.add_argument("--out", required=True, help="the picture to write: FILE.png or FILE.svg")
    p.add_argument(
        "--law",
        action="append",
        metavar="LAWS.json",
        help="frontier only: law files (fit --out) in place of those the report names",
    )
    p.set_defaults(run=run_plot)


def run_plot(args: argparse.Namespace) -> str:
    try:
        from . import plot  # lazily: matplotlib is needed by this command only
    except ImportError as e:
        if not (e.name or "").startswith("matplotlib"):
            raise
        raise BadInput(f"the plot command needs matplotlib (pip install matplotlib): {e}") from e

    options = {"laws": args.law} if args.law is not None else {}
    try:
        if args.law is not None and args.kind != "frontier":
            raise plot.ReportError("--law: only for a frontier plot")
        plot.plot(args.kind, args.input, out=args.out, **options)
    except plot.ReportError as e:
        raise BadInput(str(e)) from e
    return f"wrote {args.kind} plot of '{args.input}' to {args.out}"


def add_check_model(commands: argparse._SubParsersAction) -> None:
    from . import _check_model  # no torch here: it is imported when the command runs

    p = commands.add_parser(
        "check-model",
        help="smelt's counts beside the reference PyTorch model's, term by term (docs/reference-model.md)",
        description="Build the reference model of each CONFIG, measure its parameters, forward and training "
        "FLOPs (FlopCounterMode) and prefill KV cache, and print them beside smelt's counts.",
    )
    _check_model.add_arguments(p)
    p.set_defaults(run=run_check_model)


def run_check_model(args: argparse.Namespace) -> int:
    from . import _check_model

    try:
        return _check_model.run(args)
    except _check_model.CheckError as e:
        raise BadInput(str(e)) from e


def _nearest(word: str, parser: argparse.ArgumentParser) -> str | None:
    """The option of ``parser`` nearest to ``word`` (difflib's ratio at least 0.6), or None."""
    name = word.split("=", 1)[0]
    close = difflib.get_close_matches(name, [o for o in parser._option_string_actions if o.startswith("--")], n=1)
    return close[0] if close else None


def _cli_line() -> str:
    """Where `pip install .` put the command line smelt-match: the scripts directory of this environment."""
    import shutil
    import sysconfig

    beside = pathlib.Path(sysconfig.get_path("scripts")) / "smelt-match"
    found = str(beside) if beside.is_file() else shutil.which("smelt-match")
    if found is None:
        return "smelt-match (counts, derive, sweep, fit, frontier, export, bench): not installed in this environment"
    return f"smelt-match (counts, derive, sweep, fit, frontier, export, bench): {found}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m smelt",
        description="smelt's Python command line",
        epilog=_cli_line(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_plot(commands)
    add_check_model(commands)
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse names no alternative; smelt-match suggests the nearest option, and so does this
        command = commands.choices[args.command]
        hint = next((_nearest(w, command) for w in extra if w.startswith("-") and _nearest(w, command)), None)
        suffix = f" (did you mean '{hint}'?)" if hint else ""
        command.error(f"unrecognized arguments: {' '.join(extra)}{suffix}")
    try:
        message = args.run(args)
    except OSError as e:
        print(f"smelt: error: {e.strerror or e}", file=sys.stderr)
        return EXIT_IO
    except BadInput as e:
        print(f"smelt: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if isinstance(message, int):  # a command that printed its own output: its exit code
        return message
    print(f"smelt: {message}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
