"""xcall-report: compare, plot and publish xcall-bench result files.

Exit status: 0 done, 2 bad input or usage (one line on stderr, never a traceback),
1 could not write the output, 3 compare found no case common to the files (after its
filters): nothing was compared.
"""
import argparse
import errno
import os
import sys

from .load import InputError, load_all

PROG = "xcall-report"
NOTHING_COMPARED = 3


class _Parser(argparse.ArgumentParser):
    def error(self, message):          # one line, exit 2, like every other bad input
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _parser():
    p = _Parser(prog=PROG, description="Compare xcall-bench result files and draw them.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    c = sub.add_parser("compare", help="A/B tables normalised to the first file",
                       description="A/B tables of every case common to the files, normalised "
                       "to the first, ending with a one-line summary. Exit status 3 when no "
                       "case is common (after the filters).")
    c.add_argument("files", nargs="+", metavar="FILE.json")
    c.add_argument("--format", choices=("text", "markdown", "csv"), default="text")
    c.add_argument("-o", "--output", help="write here instead of standard output")
    c.add_argument("--bench", action="append", default=[], metavar="PATTERN",
                   help="only benches matching PATTERN: a glob when it has * ? or [, else a "
                   "substring (repeat for more)")
    c.add_argument("--case", action="append", default=[], metavar="PATTERN",
                   help="only cases matching PATTERN, the same way (e.g. 'libxcall*', "
                   "'/wake')")
    g = sub.add_parser("plot", help="PNG and SVG plots of one file, one per benchmark")
    g.add_argument("file", metavar="FILE.json")
    g.add_argument("-o", "--outdir", required=True, metavar="DIR")
    h = sub.add_parser("html", help="one self-contained HTML page")
    h.add_argument("files", nargs="+", metavar="FILE.json")
    h.add_argument("-o", "--output", required=True, metavar="report.html")
    h.add_argument("--reference", action="append", default=[], metavar="NAME",
                   help="set a shipped reference machine beside the run (repeat for more; "
                   "`xcall-report machines` lists them)")
    h.add_argument("--quiet", action="store_true",
                   help="no progress lines on stderr (a line every few seconds while the "
                   "charts are drawn)")
    m = sub.add_parser("machines", help="the shipped reference machines: list, markdown, add",
                       description="List the reference machines shipped with xcall-report, "
                       "write their table (docs/machines.md), or add one.")
    msub = m.add_subparsers(dest="mcmd", metavar="ACTION", parser_class=_Parser)
    msub.add_parser("list", help="name and a line about each (the default)")
    md = msub.add_parser("markdown", help="the table of docs/machines.md")
    md.add_argument("-o", "--output", help="write here instead of standard output")
    a = msub.add_parser("add", help="copy a results file in as a reference machine")
    a.add_argument("file", metavar="FILE.json")
    a.add_argument("--name", required=True, help="lower-case letters, digits, '.' and '-'")
    a.add_argument("--about", required=True, help="what the machine is and how quiet it was")
    a.add_argument("--doc", metavar="docs/machines.md",
                   help="rewrite this table of the machines afterwards")
    return p


def _write(path, text):
    if path in (None, "-"):
        sys.stdout.write(text)
        return
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _check_output(path, directory=False):
    """Refuse an output that cannot be written before anything is read or drawn (a page
    takes seconds to render): an OSError, exit 1 as any write that fails."""
    if path in (None, "-"):
        return
    path = os.path.abspath(path)
    if directory:
        # plot makes the directory and its missing parents: the nearest that exists must take them
        d = path
        while not os.path.exists(d) and os.path.dirname(d) != d:
            d = os.path.dirname(d)
        if not os.path.isdir(d):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", d)
    else:
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        d = os.path.dirname(path)
        if not os.path.isdir(d):
            raise FileNotFoundError(errno.ENOENT, "no such directory", d)
    # the file is written beside itself and renamed: the directory must take new files
    if not os.access(d, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, "directory not writable", d)


def _warn(results):
    for r in results:
        for w in r.warnings:
            print(f"{PROG}: warning: {w}", file=sys.stderr)
    return results


def run(argv):
    args = _parser().parse_args(argv)
    if args.cmd == "machines":
        return _machines(args)
    _check_output(args.outdir if args.cmd == "plot" else args.output, directory=args.cmd == "plot")
    if args.cmd == "compare":
        from . import compare
        results = _warn(load_all(args.files))
        if len(results) < 2:
            raise InputError("compare needs at least two files")
        cmp = compare.compare(results, benches=args.bench, cases=args.case)
        _write(args.output, compare.FORMATS[args.format](cmp))
        if args.format == "csv":            # the CSV stays rows; the verdict goes beside it
            print(compare.summary_line(cmp), file=sys.stderr)
        if not cmp.tables:
            print(f"{PROG}: {compare.nothing_compared(cmp)}", file=sys.stderr)
            return NOTHING_COMPARED
    elif args.cmd == "plot":
        results = _warn(load_all([args.file]))[0]
        from . import plots
        for p in plots.write_all(results, args.outdir):
            print(p)
    elif args.cmd == "html":
        results = _warn(load_all(args.files))
        from . import html, machines
        refs = [machines.load_machine(n) for n in args.reference]
        say = None if args.quiet else \
            (lambda line: print(f"{PROG} html: {line}", file=sys.stderr, flush=True))
        _write(args.output, html.page(results, references=refs, progress=say))
        print(args.output)
    return 0


def _machines(args):
    from . import machines
    if args.mcmd in (None, "list"):
        for m in machines.index():
            print(f"{m['name']}: {m['about']}")
    elif args.mcmd == "markdown":
        _check_output(args.output)
        _write(args.output, machines.markdown())
    elif args.mcmd == "add":
        if args.doc:
            _check_output(args.doc)
        print(machines.add(args.file, args.name, args.about, doc=args.doc))
    return 0


def main(argv=None):
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{PROG}: error: cannot write output: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
