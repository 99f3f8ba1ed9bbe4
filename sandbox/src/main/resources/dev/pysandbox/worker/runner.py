"""pysandbox runner: the Python worker inside every sandbox.

Started once per sandbox as ``python3 -I -S runner.py '{"path": [...], "preload": [...],
"imports": {"tier": ..., "deny": [...], "allow": [...] or null}}'`` (the interpreter's site
directories, found once by the server; modules to import before announcing readiness; the tier's
import policy, installed before anything else is imported, see ImportPolicy), by the launcher,
with three connected Unix sockets already in place:

  fd 1  user stdout  (raw bytes, read by the server; child processes inherit it)
  fd 2  user stderr  (likewise)
  fd 3  control      (JSON lines both ways; moved to a high fd at start-up)

The server sends one JSON object per line; the runner answers with frames written as
``\\n{json}\\n`` so that a partial line of garbage (user code writing to the control fd) is
terminated before the next real frame. Every frame starts with a fixed prefix, its request id
and type, ``{"id":"r…","type":"done"`` (``{"id":null,"type":"ready"`` for the first): the server
reads that prefix before anything else and skips, unread, every line whose id is not the request
it is waiting for, so nothing user code writes can answer a later request or cost the server
more than a glance.

Requests (``op``): ``exec``, ``interrupt``, ``get_context``, ``set_context``,
``clear_context``, ``analyze``, ``stop_others``, ``shutdown``, ``subcall_reply``. Frames
(``type``): ``ready``, ``display``, ``done``, ``subcall``.

``llm_query(prompt)`` (a builtin, for the code of agent runs) asks the server a model's answer
without any network: it sends ``{"id":"r…","type":"subcall","qid":N,"prompt":"…"}`` (N counts the
runner's calls; the prompt is a str of at most 64 KiB as UTF-8) and waits for
``{"op":"subcall_reply","id":"r…","qid":N,"text":"…"}`` (or ``"error":"…"``, raised as
RuntimeError), read like ``interrupt``: by the SIGIO handler while code runs. One call is in flight
at a time (threads take turns); the server bounds the answer (256 KiB) and answers a request's
calls only while it is in flight.

``analyze`` (sent only to the server's analysis sandbox, which runs no user code) answers the risk
report of ``code`` as ``report``: ``analyzer.py``, installed next to this file, parses and compiles
the code and never runs it.

Only the standard library is imported at start-up; matplotlib and friends are touched only
when user code already imported them (or when the server asks to preload them).
"""

import _ast
import _signal
import _thread
import binascii
import builtins
import collections
import fcntl
import posix
import sys

# Only cheap, built-in modules at start-up: every sandbox pays for its imports before it is
# ready. traceback, linecache and asyncio are imported when first needed, and JSON goes through
# the json package's own C accelerator (_json) directly, because importing the json package
# costs about 4 ms (it imports re); if _json is not there, the json package is used.
try:
    import _json

    class _ScanContext:
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        memo = {}

        @staticmethod
        def parse_constant(name):
            raise ValueError("non-standard JSON constant %s" % name)

    _scan = _json.make_scanner(_ScanContext())

    def json_loads(text):
        text = text.strip()
        try:
            value, end = _scan(text, 0)
        except StopIteration as e:
            raise ValueError("invalid JSON at %s" % e.value)
        if end != len(text):
            raise ValueError("extra data after JSON")
        return value

    def json_dumps(value, default=repr):
        encode = _json.make_encoder({}, default, _json.encode_basestring_ascii, None, ":", ",", False, False, False)
        return "".join(encode(value, 0))

except (ImportError, AttributeError, TypeError):
    import json

    json_loads = json.loads

    def json_dumps(value, default=repr):
        return json.dumps(value, default=default, allow_nan=False, separators=(",", ":"))


USER_SIGNALS = {_signal.SIGINT, _signal.SIGIO}


def _drop_pending_sigint():
    """Forget an interrupt meant for a request that has already finished."""
    while _signal.sigtimedwait([_signal.SIGINT], 0) is not None:
        pass


def _no_default(value):
    raise TypeError("not JSON: %s" % type(value).__name__)

RUNNER_FILE = __file__
ANALYZER_FILE = RUNNER_FILE.rsplit("/", 1)[0] + "/analyzer.py"
MAX_REPR = 100_000
MAX_DEPTH = 64  # levels of nesting of a value sent to the server (WorkerConnection.MAX_VALUE_DEPTH)
MAX_PROMPT_BYTES = 64 * 1024  # an llm_query prompt as UTF-8 (Subcalls.MAX_PROMPT_BYTES)
CO_COROUTINE = 0x80
PYCF_ONLY_AST = 0x400
COMPILE_FLAGS = 0x2000  # PyCF_ALLOW_TOP_LEVEL_AWAIT
ModuleType = type(sys)


def _high_fd(fd, base):
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base)


def _drop_runner_frames(report):
    """Tracebacks end in user code: the runner's own frames are left out, wherever they are (its
    request loop above the cell; its SIGIO handler below it when an interrupt lands mid-line; its
    display() helpers), in the exception and in those chained to it."""
    from traceback import StackSummary

    todo, seen = [report], set()
    while todo:
        te = todo.pop()
        if te is None or id(te) in seen:
            continue
        seen.add(id(te))
        te.stack = StackSummary.from_list([f for f in te.stack if f.filename != RUNNER_FILE])
        todo.extend((te.__cause__, te.__context__))
        todo.extend(getattr(te, "exceptions", None) or ())  # ExceptionGroup, 3.11


class ImportPolicy:
    """The tier's import policy: defence in depth on top of the sandbox, never the boundary.

    The rule: an import of a denied module (a name in ``deny``, or a submodule of one), or, with
    ``allow``, of a top-level module not in it, fails with ``ImportError: import of 'socket' is not
    allowed in tier 'basic'`` when the code that imports is the user's, and is let through when it
    is the standard library's, an installed package's or the runner's. So pandas still imports
    socket for itself, while ``import socket`` in a cell does not. The importer is the frame that
    runs the import: for import statements and ``__import__`` the caller of ``builtins.__import__``;
    for ``importlib.import_module`` its caller; for any other way to load a module that is not
    loaded yet (``importlib.util.find_spec``, ``importlib._bootstrap``), the first frame outside the
    import machinery and this file, found by this meta-path finder. A frame is trusted when its
    code's file lies in one of the interpreter's own directories (the ``sys.path`` the server
    found, none under /mnt or /tmp), is frozen (``<frozen ...>``), or is this file; anything else
    (``<cell-N>``, ``<string>`` from exec, files in /mnt/data, /mnt/host or /tmp) is the user's.

    Code in the sandbox can undo all of this (replace ``builtins.__import__``, reach a module
    through another module's attribute, forge a code object's file name): the OS sandbox is what
    holds. Imports refused are reported to the server with the execution (``denied_imports``)."""

    MAX_REPORTED = 20

    def __init__(self, tier, deny, allow, path):
        self.tier = str(tier)
        self.deny = frozenset(deny)
        self.allow = None if allow is None else frozenset(allow)
        self.watch = frozenset(name.partition(".")[0] for name in deny)
        dirs = (p.rstrip("/") + "/" for p in path if isinstance(p, str) and p.startswith("/"))
        self.trusted = tuple(d for d in dirs if d != "/" and not d.startswith(("/mnt/", "/tmp/", "/dev/", "/proc/")))
        self.machinery = tuple(p + "importlib/" for p in self.trusted)
        self.denied = []
        self.original = builtins.__import__
        self.importlib_patched = False

    def install(self):
        builtins.__import__ = self.hook
        sys.meta_path.insert(0, self)

    def take_denied(self):
        denied, self.denied = self.denied, []
        return denied

    def denies(self, name):
        if name in self.deny:
            return True
        parts = name.split(".")
        for i in range(1, len(parts)):
            if ".".join(parts[:i]) in self.deny:
                return True
        return self.allow is not None and parts[0] not in self.allow

    def _trusted(self, filename):
        return filename == RUNNER_FILE or filename.startswith("<frozen ") or filename.startswith(self.trusted)

    def _refuse(self, name):
        if len(self.denied) < self.MAX_REPORTED and name not in self.denied:
            self.denied.append(name)
        raise ImportError("import of '%s' is not allowed in tier '%s'" % (name, self.tier), name=name)

    def hook(self, name, globals=None, locals=None, fromlist=(), level=0):
        """builtins.__import__: every import statement. Names that cannot be denied pass at once."""
        if isinstance(name, str) and (level or self.allow is not None or name.partition(".")[0] in self.watch):
            if not self._trusted(sys._getframe(1).f_code.co_filename):
                self._check(_absolute(name, (globals or {}).get("__package__"), level), fromlist)
        module = self.original(name, globals, locals, fromlist, level)
        if not self.importlib_patched and not level and isinstance(name, str) and name.partition(".")[0] == "importlib":
            self._patch_importlib()
        return module

    def _check(self, name, fromlist=()):
        if not name:
            return
        if self.denies(name):
            self._refuse(name)
        for item in fromlist or ():
            if isinstance(item, str) and item != "*" and self.denies(name + "." + item):
                self._refuse(name + "." + item)

    def _patch_importlib(self):
        """importlib.import_module and importlib.__import__ find a loaded module without asking
        builtins.__import__ or the finders: they are wrapped once importlib is loaded."""
        importlib = sys.modules.get("importlib")
        if importlib is None or not hasattr(importlib, "import_module"):
            return
        self.importlib_patched = True
        original, policy = importlib.import_module, self

        def import_module(name, package=None):
            if not policy._trusted(sys._getframe(1).f_code.co_filename):
                level = len(name) - len(name.lstrip(".")) if isinstance(name, str) else 0
                if isinstance(name, str) and (not level or isinstance(package, str)):
                    policy._check(_absolute(name[level:], package, level))
            return original(name, package)

        import_module.__doc__ = original.__doc__
        importlib.import_module = import_module
        importlib.__import__ = self.hook

    def find_spec(self, name, path=None, target=None):
        """The meta-path finder: a module being loaded for the first time, however."""
        if not self.denies(name):
            return None
        frame = sys._getframe(1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not (filename == RUNNER_FILE or filename.startswith(("<frozen importlib", "<frozen zipimport"))
                    or filename.startswith(self.machinery)):
                if not self._trusted(filename):
                    self._refuse(name)
                return None
            frame = frame.f_back
        return None


def _absolute(name, package, level):
    """The absolute module name of a (possibly relative) import; '' when it cannot be told."""
    if not level:
        return name
    if not isinstance(package, str) or not package:
        return ""
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    return base + "." + name if name else base



class Channel:
    """The control socket. No reader thread: the main thread reads requests itself when idle
    (one wake-up less per request), and while user code runs the socket raises SIGIO at the
    main thread, whose handler reads what came, so that an interrupt lands at once."""

    def __init__(self, fd):
        self.fd = fd
        self.lock = _thread.allocate_lock()
        self.buf = b""
        self.queue = collections.deque()
        self.on_interrupt = None
        self.on_reply = None
        self.closed = False

    def forked(self):
        """In a child that user code forked: the control socket is the parent's, so let go of it
        (a child's frames would be taken for the parent's reply)."""
        fd, self.fd, self.closed = self.fd, -1, True
        try:
            posix.close(fd)
        except OSError:
            pass

    def send(self, frame):
        if self.fd < 0:
            return
        # The id and type come first, in this order: the server reads them before the rest.
        head = {"id": frame.get("id"), "type": frame.get("type")}
        try:
            text = json_dumps({**head, **frame})
        except (ValueError, TypeError, RecursionError) as e:
            text = json_dumps({**head, "status": "error",
                               "error": {"name": "pysandbox.FrameError", "value": _short_repr(e), "traceback": ""}})
        data = b"\n" + text.encode("ascii") + b"\n"
        view = memoryview(data)
        with self.lock:
            while view:
                try:
                    n = posix.write(self.fd, view)
                except InterruptedError:
                    continue
                view = view[n:]

    def _take(self, chunk):
        if not chunk:
            self.closed = True
            return
        self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            if not line.strip():
                continue
            try:
                msg = json_loads(line.decode("utf-8"))
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            op = msg.get("op")
            if op == "interrupt":
                self.on_interrupt(msg.get("id"))
            elif op == "subcall_reply":
                self.on_reply(msg)  # never a request: one that comes late is dropped there
            else:
                self.queue.append(msg)

    def next_request(self):
        """The next request, blocking (main thread, SIGIO blocked); None when the server is gone."""
        while not self.queue:
            if self.closed:
                return None
            try:
                chunk = posix.read(self.fd, 1 << 16)
            except InterruptedError:
                continue
            except OSError:
                chunk = b""
            self._take(chunk)
        return self.queue.popleft()

    def on_sigio(self, signum, frame):
        """Reads whatever has come without blocking (runs in the main thread, in user code)."""
        flags = fcntl.fcntl(self.fd, fcntl.F_GETFL)
        fcntl.fcntl(self.fd, fcntl.F_SETFL, flags | posix.O_NONBLOCK)
        try:
            while not self.closed:
                try:
                    chunk = posix.read(self.fd, 1 << 16)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    chunk = b""
                self._take(chunk)
        finally:
            fcntl.fcntl(self.fd, fcntl.F_SETFL, flags)

    def signal_main_thread(self):
        """Route SIGIO for this socket to the calling (main) thread only (F_SETOWN_EX, TID)."""
        owner = (0).to_bytes(4, sys.byteorder) + _thread.get_native_id().to_bytes(4, sys.byteorder)  # F_OWNER_TID
        fcntl.fcntl(self.fd, 15, owner)  # F_SETOWN_EX
        fcntl.fcntl(self.fd, fcntl.F_SETFL, fcntl.fcntl(self.fd, fcntl.F_GETFL) | posix.O_ASYNC)


def _short_repr(obj):
    try:
        text = repr(obj)
    except BaseException as e:  # a broken __repr__ must not break the runner
        text = "<unrepresentable %s: %s>" % (type(obj).__name__, e)
    if len(text) > MAX_REPR:
        text = text[:MAX_REPR] + "... [repr truncated at %d characters]" % MAX_REPR
    return text


def _figure_png(fig):
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return _b64(buf.getvalue())


def _b64(data):
    return binascii.b2a_base64(bytes(data), newline=False).decode("ascii")


def mime_bundle(obj):
    """A Jupyter-style MIME bundle: text/plain always, richer forms when the object has them."""
    bundle = {"text/plain": _short_repr(obj)}
    mpl_figure = sys.modules.get("matplotlib.figure")
    if mpl_figure is not None and isinstance(obj, mpl_figure.Figure):
        try:
            bundle["image/png"] = _figure_png(obj)
        except Exception:
            pass
        return bundle
    for method, mime in (
        ("_repr_html_", "text/html"),
        ("_repr_markdown_", "text/markdown"),
        ("_repr_svg_", "image/svg+xml"),
        ("_repr_png_", "image/png"),
        ("_repr_jpeg_", "image/jpeg"),
        ("_repr_latex_", "text/latex"),
        ("_repr_json_", "application/json"),
    ):
        fn = getattr(type(obj), method, None)
        if fn is None:
            continue
        try:
            value = fn(obj)
        except Exception:
            continue
        if value is None:
            continue
        if isinstance(value, tuple):  # (data, metadata)
            value = value[0]
        if mime in ("image/png", "image/jpeg"):
            if isinstance(value, str):
                value = value.encode("ascii", "replace")
            if not isinstance(value, (bytes, bytearray)):
                continue
            value = _b64(value)
        elif mime == "application/json":
            if not _jsonable(value):
                continue
        elif not isinstance(value, str):
            continue
        bundle[mime] = value
    return bundle


def _too_deep(value, limit=None):
    """True when value nests lists and dicts deeper than MAX_DEPTH (the most the server reads),
    found without recursion (so a cycle or a deep chain cannot overflow anything here)."""
    limit = MAX_DEPTH if limit is None else limit
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, (list, tuple)):
            children = v
        else:
            continue
        if depth >= limit:
            return True
        for child in children:
            if isinstance(child, (dict, list, tuple)):
                stack.append((child, depth + 1))
    return False


def _jsonable(value):
    if _too_deep(value):
        return False
    try:
        json_dumps(value, default=_no_default)
        return True
    except (TypeError, ValueError, RecursionError):
        return False


class Subcalls:
    """llm_query(prompt): a model's answer for the code of an agent run, asked of the server over
    the control socket (the sandbox has no network; the server answers through the run's listener,
    and refuses for a run that is not an agent's). The answer is read where an interrupt is: by the
    main thread's SIGIO handler while code runs, which releases the lock the caller waits on. A lock
    acquire in the main thread runs signal handlers, so the wait costs no CPU and cancel_run's
    KeyboardInterrupt still lands in it; another thread waits the same way while the main thread
    runs code. One call is in flight at a time: callers take turns."""

    def __init__(self, runner):
        self.runner = runner
        self.turn = _thread.allocate_lock()
        self.qid = 0
        self.waiting = None  # [request id, qid, lock the answer releases, answer frame]
        self.open = False  # the code runs: its answers can be read

    def function(self):
        def llm_query(prompt):
            """llm_query(prompt: str) -> str: the model's answer to prompt (at most 64 KiB as
            UTF-8), asked by the server; RuntimeError when it cannot answer (not an agent run, a
            budget spent, a provider's failure)."""
            return self.ask(prompt)

        return llm_query

    def ask(self, prompt):
        if not isinstance(prompt, str):
            raise TypeError("llm_query() takes a str prompt, not %s" % type(prompt).__name__)
        try:
            size = len(prompt.encode("utf-8"))
        except UnicodeEncodeError:
            raise ValueError("llm_query()'s prompt is not valid text: it holds a lone surrogate") from None
        if size > MAX_PROMPT_BYTES:
            raise ValueError("llm_query()'s prompt is %d bytes as UTF-8, over the %d KiB one may have;"
                             " shorten it" % (size, MAX_PROMPT_BYTES // 1024))
        channel = self.runner.channel
        with self.turn:
            request_id = self.runner.current
            if channel.fd < 0:
                raise RuntimeError("llm_query is not available in a forked process")
            if not self.open or request_id is None:
                raise RuntimeError("llm_query works only while a run's code runs")
            if (_thread.get_ident() == self.runner.main_thread
                    and _signal.SIGIO in _signal.pthread_sigmask(_signal.SIG_BLOCK, ())):
                raise RuntimeError("llm_query cannot wait for its answer with SIGIO blocked")
            self.qid += 1
            w = [request_id, self.qid, _thread.allocate_lock(), None]
            w[2].acquire()
            self.waiting = w
            try:
                if not self.open:  # the code ended meanwhile (a thread's call): nobody would answer
                    raise RuntimeError("the run's code ended before llm_query was sent")
                channel.send({"type": "subcall", "id": request_id, "qid": w[1], "prompt": prompt})
                w[2].acquire()
            finally:
                self.waiting = None
        answer = w[3]
        text, error = answer.get("text"), answer.get("error")
        if error is not None or not isinstance(text, str):
            raise RuntimeError(str(error) if error is not None else "llm_query got no answer")
        return text

    def reply(self, msg):
        """A subcall_reply, read on the main thread; one nobody waits for any more is dropped."""
        w = self.waiting
        if w is None or w[3] is not None or msg.get("id") != w[0] or msg.get("qid") != w[1]:
            return
        w[3] = msg
        w[2].release()

    def close(self):
        """The code ended (main thread, SIGIO blocked): a call still waiting gets no answer."""
        self.open = False
        w = self.waiting
        if w is not None and w[3] is None:
            w[3] = {"error": "the run's code ended before llm_query's answer came"}
            w[2].release()


class Runner:
    def __init__(self, channel):
        self.channel = channel
        self.main_thread = _thread.get_ident()
        self.sources = {}  # cell file name -> source, for tracebacks
        self.pending_interrupt = None
        self.preload_errors = {}  # module -> why it could not be imported, told in "ready"
        self.policy = None  # the tier's ImportPolicy, if it has one
        self.current = None  # id of the request being executed
        self.last_request = None  # id of the last request started
        self.cell = 0
        self.analyzer = None  # analyzer.py as a module, loaded by the first analyze request
        self.subcalls = Subcalls(self)
        self.namespace = self._fresh_namespace()
        self.out_backup = _high_fd(1, self.channel.fd + 1)
        self.err_backup = _high_fd(2, self.channel.fd + 1)
        self.stdout = self.stderr = None
        self._restore_streams()

    # -- streams -------------------------------------------------------------------------

    def _restore_streams(self):
        """Undo whatever the last execution did to fds 0-2 and sys.std*."""
        for fd, backup in ((1, self.out_backup), (2, self.err_backup)):
            try:
                posix.dup2(backup, fd, inheritable=True)
            except OSError:
                pass
        try:
            null = posix.open("/dev/null", posix.O_RDONLY)
            if null != 0:
                posix.dup2(null, 0)
                posix.close(null)
        except OSError:
            pass
        if self.stdout is None or self.stdout.closed or sys.stdout is not self.stdout:
            self.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)
        if self.stderr is None or self.stderr.closed or sys.stderr is not self.stderr:
            self.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)
        sys.stdout, sys.stderr = self.stdout, self.stderr
        sys.__stdout__, sys.__stderr__ = self.stdout, self.stderr
        if sys.stdin is None or getattr(sys.stdin, "closed", True):
            sys.stdin = open(0, "r", closefd=False)

    def _flush_streams(self):
        for stream in (sys.stdout, sys.stderr, self.stdout, self.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except Exception:
                pass

    # -- namespace -----------------------------------------------------------------------

    def _fresh_namespace(self):
        main = ModuleType("__main__")
        ns = main.__dict__
        ns["__builtins__"] = __builtins__
        ns["display"] = self._display
        sys.modules["__main__"] = main
        return ns

    def _display(self, *objs):
        """display(obj, ...): send each object's MIME bundle as a display output now."""
        for obj in objs:
            self.channel.send({"type": "display", "id": self.current, "data": mime_bundle(obj)})

    # -- execution -----------------------------------------------------------------------

    def interrupt(self, request_id):
        """SIGINT (and SIGIO) are blocked in the runner except while user code runs, so an
        interrupt lands in user code or not at all, and the user's own SIGINT handling (say,
        SIG_IGN) is respected; one that comes before its request starts is remembered."""
        self.pending_interrupt = request_id
        if self.current is not None and request_id == self.current:
            try:
                _signal.pthread_kill(self.main_thread, _signal.SIGINT)
            except Exception:
                pass

    def _run(self, code):
        result = eval(code, self.namespace)
        if code.co_flags & CO_COROUTINE:
            import asyncio

            loop = asyncio.new_event_loop()
            try:
                result = loop.run_until_complete(result)
            finally:
                loop.close()
        return result

    def execute(self, msg):
        code = msg.get("code", "")
        if _EGRESS:
            _ensure_forwarder()
        self.cell += 1
        filename = "<cell-%d>" % self.cell
        self.sources[filename] = code
        if "linecache" in sys.modules:
            self._share_sources()
        self.namespace["__outputs__"] = {}
        frame = {"type": "done", "id": self.current, "cell": self.cell}
        value = None
        has_value = False
        try:
            _drop_pending_sigint()
            self.subcalls.open = True
            _signal.pthread_sigmask(_signal.SIG_UNBLOCK, USER_SIGNALS)
            try:
                if self.pending_interrupt is not None and self.pending_interrupt == self.current:
                    raise KeyboardInterrupt
                try:
                    tree = compile(code, filename, "exec", PYCF_ONLY_AST | COMPILE_FLAGS)
                except SyntaxError as e:
                    raise self._explained(e, code) from None
                last = None
                if tree.body and isinstance(tree.body[-1], _ast.Expr) and not code.rstrip().endswith(";"):
                    last = tree.body.pop()
                self._run(compile(tree, filename, "exec", COMPILE_FLAGS))
                if last is not None:
                    value = self._run(compile(_ast.Expression(last.value), filename, "eval", COMPILE_FLAGS))
                    has_value = value is not None
            finally:
                _signal.pthread_sigmask(_signal.SIG_BLOCK, USER_SIGNALS)
                self.subcalls.close()
            frame["status"] = "ok"
        except SystemExit as e:
            code_value = e.code
            if code_value is None or code_value == 0:
                frame["status"] = "ok"
                frame["exit_code"] = 0
            else:
                frame["status"] = "error"
                frame["exit_code"] = code_value if isinstance(code_value, int) else 1
                frame["error"] = self._error(e)
        except BaseException as e:
            frame["status"] = "error"
            frame["error"] = self._error(e)
        finally:
            self._flush_streams()
        if has_value:
            self.namespace["_"] = value
            frame["result"] = self._safe(lambda: mime_bundle(value))
        figures = self._safe(self._figures) or []
        if figures:
            frame["figures"] = figures
        max_bytes = msg.get("outputs_max_bytes")
        frame["outputs"] = self._safe(lambda: self._outputs(max_bytes)) or {"values": {}, "non_json": []}
        if self.policy is not None:
            denied = self.policy.take_denied()
            if denied:
                frame["denied_imports"] = denied
        return frame

    def _safe(self, fn):
        try:
            return fn()
        except BaseException as e:
            sys.stderr.write("pysandbox: could not collect results: %s\n" % _short_repr(e))
            self._flush_streams()
            return None

    def _figures(self):
        """Every open matplotlib figure becomes a PNG display; the figures are then closed."""
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return []
        pngs = []
        for num in plt.get_fignums():
            fig = plt.figure(num)
            pngs.append({"text/plain": _short_repr(fig), "image/png": _figure_png(fig)})
        plt.close("all")
        return pngs

    def _show(self, *args, **kwargs):
        """plt.show(): emit the open figures now, as Jupyter's inline backend does."""
        for bundle in self._figures():
            self.channel.send({"type": "display", "id": self.current, "data": bundle})

    def _outputs(self, max_bytes=None):
        raw = self.namespace.get("__outputs__")
        if not isinstance(raw, dict):
            return {"values": {}, "non_json": [], "invalid": _short_repr(raw)}
        values, non_json = {}, []
        for key, value in raw.items():
            key = str(key)
            if _too_deep(value):
                return {"values": {}, "non_json": [], "rejected": (
                    "__outputs__[%s] is nested deeper than %d levels, the most a value the sandbox"
                    " sends may have; nothing of __outputs__ was kept: flatten it, or store it as a"
                    " JSON string (json.dumps)" % (_short_repr(key)[:200], MAX_DEPTH))}
            if _jsonable(value):
                values[key] = value
            else:
                values[key] = {"repr": _short_repr(value), "type": type(value).__name__}
                non_json.append(key)
        if isinstance(max_bytes, int) and max_bytes > 0:
            size = len(json_dumps(values))
            if size > max_bytes:
                return {"values": {}, "non_json": [], "rejected": (
                    "__outputs__ holds over %d bytes as JSON, more than the %d MiB a run may return"
                    " there (outputs_max_mb); nothing of it was kept: return less, or write it to a"
                    " file in /mnt/data" % (size, max_bytes // (1024 * 1024)))}
        return {"values": values, "non_json": non_json}

    def _share_sources(self):
        """Let linecache (tracebacks, inspect) see every cell's source."""
        import linecache

        for filename, code in self.sources.items():
            if filename not in linecache.cache:
                linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)

    def _error(self, exc):
        import traceback

        self._share_sources()
        if isinstance(exc, SyntaxError) and exc.text is None and exc.filename in self.sources and exc.lineno:
            lines = self.sources[exc.filename].splitlines()
            if 0 < exc.lineno <= len(lines):
                exc.text = lines[exc.lineno - 1]
        report = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        _drop_runner_frames(report)
        name = type(exc).__name__
        module = type(exc).__module__
        if module not in ("builtins", "__main__"):
            name = module + "." + type(exc).__qualname__
        lines = report.format()
        try:
            value = str(exc.code) if isinstance(exc, SystemExit) else str(exc)
        except BaseException:
            value = "<exception str() failed>"
        if len(value) > MAX_REPR:
            value = value[:MAX_REPR] + "... [truncated at %d characters]" % MAX_REPR
        return {"name": name, "value": value, "traceback": "".join(lines)}

    # -- context -------------------------------------------------------------------------

    def get_context(self, msg):
        names = msg.get("names")
        variables = {}
        for name, value in self.namespace.items():
            if name.startswith("__") or name in ("display", "_"):
                continue
            if names is not None and name not in names:
                continue
            if isinstance(value, ModuleType) and names is None:
                continue
            if _jsonable(value):
                variables[name] = {"type": type(value).__name__, "value": value}
            else:
                variables[name] = {"type": type(value).__name__, "repr": _short_repr(value)}
        missing = [n for n in (names or []) if n not in variables]
        return {"type": "done", "id": self.current, "status": "ok", "variables": variables, "missing": missing}

    def set_context(self, msg):
        values = msg.get("values") or {}
        for name, value in values.items():
            self.namespace[name] = value
        return {"type": "done", "id": self.current, "status": "ok", "set": sorted(values)}

    def clear_context(self, msg):
        self.namespace = self._fresh_namespace()
        return {"type": "done", "id": self.current, "status": "ok"}

    # -- analysis ------------------------------------------------------------------------

    def analyze(self, msg):
        """The risk report of code that is not run: ``{"code": ..., "budget_ms": ...}``."""
        frame = {"type": "done", "id": self.current}
        try:
            budget = msg.get("budget_ms")
            budget = budget / 1000.0 if isinstance(budget, (int, float)) and budget > 0 else 2.0
            frame["report"] = self._analyzer().analyze_safely(str(msg.get("code", "")), budget)
            frame["status"] = "ok"
        except BaseException as e:  # no analyser: say so rather than leave the server waiting
            frame["status"] = "error"
            frame["error"] = {"name": type(e).__name__, "value": _short_repr(e), "traceback": ""}
        return frame

    def _analyzer(self):
        """analyzer.py (beside this file in every sandbox), loaded once, when first needed."""
        if self.analyzer is None:
            with open(ANALYZER_FILE, encoding="utf-8") as f:
                source = f.read()
            module = ModuleType("pysandbox_analyzer")
            module.__file__ = ANALYZER_FILE
            exec(compile(source, ANALYZER_FILE, "exec"), module.__dict__)
            self.analyzer = module
        return self.analyzer

    def _explained(self, error, code):
        """A SyntaxError at an IPython ``!command`` or ``%magic`` line, with what to do instead (the
        analyser's words, as validate_code gives them); any other one as it is."""
        lines = code.splitlines()
        if not isinstance(error.lineno, int) or not 0 < error.lineno <= len(lines):
            return error
        try:
            hint = self._analyzer().not_python_hint(lines[error.lineno - 1])
        except Exception:  # no analyser: Python's own message still says where
            return error
        if hint is None:
            return error
        return SyntaxError(hint, (error.filename, error.lineno, 1, lines[error.lineno - 1]))

    def stop_others(self, msg):
        """Output past the server's limit came between requests: kill every process in the
        sandbox but this one (the runner is PID 2 of its PID namespace; kill(-1) spares PID 1,
        bubblewrap's init, and the caller). Only when no request came since the server decided
        so, lest it kill what a newer request started."""
        if msg.get("after") != self.last_request:
            return
        try:
            posix.kill(-1, _signal.SIGKILL)
        except OSError:
            pass

    # -- loop ------------------------------------------------------------------------------

    def preload(self, modules):
        """Imports the modules the server asked for; what failed goes to the server in ``ready``."""
        for name in modules:
            try:
                __import__(name)
            except BaseException as e:  # SystemExit or KeyboardInterrupt in a module's import too
                try:
                    text = "%s: %s" % (type(e).__name__, e)
                except BaseException:
                    text = _short_repr(e)
                # Short: the ready frame that carries it may not pass 1 MiB.
                if len(self.preload_errors) < 100:
                    self.preload_errors[str(name)[:200]] = text[:1000]
        if "matplotlib.pyplot" in sys.modules:
            self._patch_pyplot()

    def _patch_pyplot(self):
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None and getattr(plt.show, "__name__", "") != "_show":
            plt.show = self._show

    def serve(self):
        handlers = {
            "exec": self.execute,
            "get_context": self.get_context,
            "set_context": self.set_context,
            "clear_context": self.clear_context,
            "analyze": self.analyze,
        }
        self.pid = posix.getpid()
        ready = {"type": "ready", "id": None, "pid": self.pid, "python": sys.version.split()[0]}
        if self.preload_errors:
            ready["preload_errors"] = self.preload_errors
        self.channel.send(ready)
        while True:
            try:
                msg = self.channel.next_request()
                if msg is None or msg.get("op") == "shutdown":
                    return
                if msg.get("op") == "stop_others":
                    self.stop_others(msg)
                    continue
                handler = handlers.get(msg.get("op"))
                if handler is None:
                    # An answer, not silence: the server would otherwise wait for its timeout.
                    self.channel.send({"id": msg.get("id"), "type": "done", "status": "error",
                                       "error": {"name": "pysandbox.UnknownOperation",
                                                 "value": "unknown operation " + _short_repr(msg.get("op")),
                                                 "traceback": ""}})
                    continue
                self._restore_streams()
                self.current = self.last_request = msg.get("id")
                try:
                    if "matplotlib.pyplot" in sys.modules:
                        self._patch_pyplot()
                    frame = handler(msg)
                finally:
                    request_id, self.current = self.current, None
                frame["id"] = request_id
                if posix.getpid() != self.pid:
                    # A forked copy of the runner finished the code it inherited: it ends here.
                    code = frame.get("exit_code", 0 if frame.get("status") == "ok" else 1)
                    posix._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)
                self.channel.send(frame)
            except KeyboardInterrupt:
                continue  # an interrupt that arrived between requests


_EGRESS = None
_FORWARDER = None


def _start_forwarder(egress):
    """The sandbox's only way out: a forwarder from 127.0.0.1:<port> to the egress proxy's socket,
    started before anything else and waited for until it listens. The code may kill it (it runs as
    the code's user), and so may the idle-output guard (kill(-1)): before each execution the runner
    starts it again if it is gone."""
    global _EGRESS, _FORWARDER
    import subprocess

    _EGRESS = egress
    _FORWARDER = subprocess.Popen(
        [sys.executable, "-I", "-S", egress["forwarder"], str(egress["port"]), egress["socket"]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        close_fds=True,
    )
    ready = _FORWARDER.stdout.readline()
    _FORWARDER.stdout.close()
    if ready.strip() != b"ready":
        raise SystemExit("the egress forwarder did not start")


def _ensure_forwarder():
    try:
        if _FORWARDER is not None and _FORWARDER.poll() is None:
            return
        _start_forwarder(_EGRESS)
    except BaseException:  # noqa: BLE001 - the run goes on without a way out, as it would anyway
        pass


def _connect(way):
    """In a container nothing is inherited: connect the three channels to the server's door (a Unix
    socket bound into the sandbox), introduce each with the sandbox's id and one-time token, and
    put them where a launcher would have (fd 3 control, 1 stdout, 2 stderr; 0 is /dev/null)."""
    import socket

    socks = {}
    for channel in ("ctl", "out", "err"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(way["socket"])
        hello = '{"sandbox": %s, "token": %s, "channel": "%s"}\n' % (
            json_dumps(way["sandbox"]), json_dumps(way["token"]), channel)
        s.sendall(hello.encode())
        socks[channel] = s
    null = posix.open("/dev/null", posix.O_RDWR)
    # Lift every source above the targets first, so that no dup2 clobbers another source.
    sources = [(0, _high_fd(null, 16)), (1, _high_fd(socks["out"].fileno(), 16)),
               (2, _high_fd(socks["err"].fileno(), 16)), (3, _high_fd(socks["ctl"].fileno(), 16))]
    posix.close(null)
    for s in socks.values():
        s.close()
    for target, fd in sources:
        posix.dup2(fd, target, inheritable=target != 3)
        posix.close(fd)


def main():
    options = json_loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    if options.get("connect"):
        _connect(options.pop("connect"))
    for entry in options.get("path", []):
        if entry not in sys.path:
            sys.path.append(entry)
    site_dir = options.get("site")
    if site_dir:
        # The run's package environment comes first, its .pth files processed, so that a version
        # it holds wins over the system's; it lies outside /mnt and /tmp, so the import policy
        # trusts its packages as it trusts the system's.
        import site

        before = list(sys.path)
        site.addsitedir(site_dir)
        sys.path[:] = [p for p in sys.path if p not in before] + before
    egress = options.get("egress")
    if egress:
        _start_forwarder(egress)
    sys.argv = [""]
    # Reporting an error must not need an import: after a MemoryError there may be no memory left
    # for one (nor for running the import policy's hook), and the runner would die with the run.
    import traceback  # noqa: F401
    imports = options.get("imports")
    policy = None
    if imports:
        # Before anything else is imported: no user code has run yet, and none ever runs without it.
        policy = ImportPolicy(imports.get("tier"), imports.get("deny") or [], imports.get("allow"), sys.path)
        policy.install()
    # SIGINT and SIGIO are only let through while user code runs (see Runner.interrupt).
    _signal.pthread_sigmask(_signal.SIG_BLOCK, USER_SIGNALS)
    ctl = _high_fd(3, 64)
    posix.close(3)
    channel = Channel(ctl)
    posix.register_at_fork(after_in_child=channel.forked)
    runner = Runner(channel)
    runner.policy = policy
    channel.on_interrupt = runner.interrupt
    channel.on_reply = runner.subcalls.reply
    builtins.llm_query = runner.subcalls.function()
    _signal.signal(_signal.SIGIO, channel.on_sigio)
    channel.signal_main_thread()
    runner.preload(options.get("preload", []))
    runner.serve()
    posix._exit(0)


if __name__ == "__main__":
    main()
