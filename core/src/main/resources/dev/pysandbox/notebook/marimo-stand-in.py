try:
    import marimo
except ModuleNotFoundError:  # no marimo: a tiny stand-in runs the cells in order

    def _marimo_stand_in(notebook_file):
        """Enough of marimo for `python3 notebook.py`: cells run in file order in one namespace,
        each its function's body less four spaces and the final `return`. A cell that raises has
        its traceback printed and the next one runs (exit status 1 at the end); disabled cells
        (runs the server stopped) and unparsable ones are skipped with a note on stderr."""
        import sys

        module = type(sys)("marimo")

        def note(text):
            sys.stdout.flush()
            print("pysandbox: " + text, file=sys.stderr, flush=True)

        class App:
            def __init__(self, **config):
                self._cells = []

            def cell(self, fn=None, **config):
                if fn is None:
                    return lambda f: self.cell(f, **config)
                self._cells.append((fn, config))
                return fn

            def _unparsable_cell(self, code, name=None, **config):
                self._cells.append((None, config))

            def _source(self):
                # The file, when run as one; else (pysandbox run notebook.py, exec) the source the
                # cells were compiled from, as linecache holds it.
                if notebook_file:
                    try:
                        with open(notebook_file, encoding="utf-8") as f:
                            return f.read()
                    except OSError:
                        pass
                import linecache

                for fn, _ in self._cells:
                    if fn is not None:
                        lines = linecache.getlines(fn.__code__.co_filename)
                        if lines:
                            return "".join(lines)
                raise RuntimeError("cannot find this notebook's source to run its cells")

            def run(self):
                import ast

                source = self._source()
                lines = source.split("\n")
                cells = {}
                for node in ast.parse(source).body:
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
                        cells[node.decorator_list[0].lineno] = node
                main = type(sys)("__main__")
                namespace = main.__dict__
                namespace["display"] = lambda *objs: None
                previous = sys.modules.get("__main__")
                sys.modules["__main__"] = main  # as in the sandbox: classes pickle, __main__ imports
                try:
                    failed = self._run_cells(cells, lines, namespace)
                finally:
                    sys.modules["__main__"] = previous
                if failed:
                    raise SystemExit(1)

            def _run_cells(self, cells, lines, namespace):
                import linecache
                import traceback

                failed = False
                for number, (fn, config) in enumerate(self._cells, 1):
                    if fn is None:
                        note("cell %d is not valid Python as a cell (kept as text), not run" % number)
                        continue
                    node = cells[fn.__code__.co_firstlineno]
                    if config.get("disabled"):
                        note("cell %d (line %d) is disabled: its run did not end on its own, not run"
                             % (number, node.lineno))
                        continue
                    body = lines[node.lineno : node.body[-1].lineno - 1]
                    code = "\n".join(line[4:] if line.startswith("    ") else line for line in body) + "\n"
                    name = "<cell-%d>" % number
                    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
                    namespace["__outputs__"] = {}
                    try:
                        compiled = compile(code, name, "exec", 0x2000)  # PyCF_ALLOW_TOP_LEVEL_AWAIT
                        result = eval(compiled, namespace)
                        if compiled.co_flags & 0x80:  # CO_COROUTINE: top-level await
                            import asyncio

                            loop = asyncio.new_event_loop()
                            try:
                                loop.run_until_complete(result)
                            finally:
                                loop.close()
                    except KeyboardInterrupt:
                        raise
                    except BaseException as e:
                        if isinstance(e, SystemExit) and e.code in (None, 0):
                            continue
                        failed = True
                        report = traceback.TracebackException(type(e), e, e.__traceback__)
                        report.stack = traceback.StackSummary.from_list(
                            [frame for frame in report.stack if frame.filename != notebook_file])
                        sys.stdout.flush()
                        sys.stderr.write("".join(report.format()))
                        sys.stderr.flush()
                return failed

        module.App = App
        module.md = lambda text: text
        return module

    import sys as _sys

    _sys.modules["marimo"] = _marimo_stand_in(globals().get("__file__"))
