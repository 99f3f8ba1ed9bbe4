"""pysandbox code analyser: what code would try to do, found without running it.

Loaded by the runner of the server's analysis sandbox (the ``analyze`` operation) and run by the
interpreter that runs user code, so that what it calls valid is what the runner compiles. It only
ever parses and compiles (``compile(..., PyCF_ONLY_AST)`` and ``compile(tree)``, which build code
objects and never execute them); nothing of the code is imported, evaluated or run.

``analyze(code, budget)`` answers a JSON-ready dict: ``valid``, ``syntax_errors`` (line, column,
message), ``risk_findings`` (rule, severity, message, line, column, snippet; most severe first),
``max_severity``, ``lines``, ``functions``, ``imports``.

How it sees through simple disguises: every name the code binds (imports, assignments, walrus,
tuple unpacking) is tracked, flow- and scope-insensitively, to the set of things it may hold: a
module or function by its qualified name (``import subprocess as sp`` makes ``sp.run`` mean
``subprocess.run``; ``f = eval`` makes ``f(x)`` an eval), a constant string (so ``'sys' + 'tem'``
is ``system``), a path, data decoded at run time, the global namespace. A name that may hold a
flagged thing anywhere is flagged everywhere: over-reporting is the safe side. What it cannot follow
(values through function calls, containers, attributes of objects, earlier cells of a session) it
does not claim to: the sandbox is the boundary, this is a reviewer's aid.

Hostile input: the walk is iterative (no recursion on the tree), expression-following is bounded
in depth, the whole analysis in time; RecursionError or MemoryError from Python's own parser and
compiler are reported as a syntax problem, anything the analyser gives up on as an
``analysis_incomplete`` finding at high. It never raises.

(Long because it is one thing: the rule table and the walk that applies it.)
"""

import _ast
import time

CRITICAL, HIGH, MEDIUM, LOW = "critical", "high", "medium", "low"
RANK = {LOW: 0, MEDIUM: 1, HIGH: 2, CRITICAL: 3}

PYCF_ONLY_AST = 0x400
PYCF_ALLOW_TOP_LEVEL_AWAIT = 0x2000  # as the runner compiles cells
MAX_SNIPPET = 200
MAX_DEPTH = 50  # how deep one expression is followed (attribute chains, nested calls)
MAX_VALUES = 8  # values a name may hold before it is "anything" (flagged ones are always kept)
MAX_CONST = 10_000  # longest constant string carried through names and folding
MAX_NESTED = 2  # exec("...") inside exec("...") analysed this deep
MAX_FINDINGS = 500  # listed, most severe first; the rest are counted in one last finding
WORKSPACE = "/mnt/data"

# Values a name may hold are strings: a qualified name ("os.system"), or one of these markers
# followed by data. "\0?" means "something not followed".
UNKNOWN = "\0?"
CONST = "\0s"  # + the string
PATH = "\0p"  # + the path of a pathlib.Path
DECODED = "\0d"  # data decoded or unpacked at run time (base64, hex, bytes(...), ...)
DYNAMIC_MODULE = "\0m"  # a module imported by a computed name
GLOBALS = "\0g"  # the global namespace (globals(), vars(), a frame's f_globals, __globals__)
NAMESPACE = "\0D"  # + qualified name: the __dict__ / vars() of that module or object

# -- the rules ----------------------------------------------------------------------------------

# Qualified name -> (rule, severity, what it does). A name matches its own entry or, failing that,
# the entry of its longest prefix (so "subprocess.run" matches "subprocess", "os.system.__call__"
# matches "os.system"), except the entries in EXACT_ONLY.
NAMES = {}


def _names(rule, severity, what, *qualified):
    for q in qualified:
        NAMES[q] = (rule, severity, what)


# The tiers (README, "validate_code"): a call that runs a program, and eval / exec / compile of code
# that is not a constant, are critical; importing a module that can run programs is high (a call
# still has to come); writing files outside the workspace medium (high outside /tmp); reading the
# environment (cleared in every sandbox) low. A program-running *function* imported by name or
# passed as a value stays critical: a later cell of the session may call it where no cell shows it.
_names("process_execution", CRITICAL, "runs a shell command", "os.system", "os.popen",
       "subprocess.getoutput", "subprocess.getstatusoutput", "_posixsubprocess", "commands")
_names("process_execution", CRITICAL, "runs a program on a pseudo-terminal (an interactive shell)",
       "pty.spawn")
_names("process_execution", CRITICAL, "runs another program", "subprocess.run", "subprocess.call",
       "subprocess.check_call", "subprocess.check_output", "subprocess.Popen", "os.execl",
       "os.execle", "os.execlp", "os.execlpe", "os.execv", "os.execve", "os.execvp", "os.execvpe",
       "os.spawnl", "os.spawnle", "os.spawnlp", "os.spawnlpe", "os.spawnv", "os.spawnve",
       "os.spawnvp", "os.spawnvpe", "os.posix_spawn", "os.posix_spawnp",
       "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell")
# Functions of other modules that run a program themselves (issue 24: the analysis missed what is
# not named subprocess or os; a reviewer's aid, not a complete list).
_names("process_execution", CRITICAL, "runs another program",
       "multiprocessing.util.spawnv_passfds", "platform._syscmd_file", "platform._syscmd_ver",
       "uuid._get_command_stdout", "pydoc.pipepager", "pydoc.tempfilepager",
       "imaplib.IMAP4_stream", "distutils.spawn")
_names("process_execution", HIGH, "runs shell commands it is given", "pipes.Template")
_names("process_execution", HIGH, "forks the process", "os.fork", "os.forkpty", "pty.fork")
_names("process_execution", HIGH, "can run other programs", "subprocess", "pty", "sh", "plumbum",
       "pexpect")
_names("process_execution", MEDIUM, "signals another process", "os.kill", "os.killpg")
_names("dynamic_code", CRITICAL, "runs code built at run time", "builtins.eval", "builtins.exec",
       "builtins.compile")
_names("dynamic_code", HIGH, "runs code built at run time", "runpy", "types.FunctionType",
       "types.CodeType", "types.LambdaType", "code.interact", "code.InteractiveConsole",
       "code.InteractiveInterpreter", "code.compile_command", "codeop")
_names("dynamic_import", HIGH, "imports a module chosen at run time", "builtins.__import__",
       "importlib.__import__", "importlib.util.spec_from_file_location",
       "importlib.util.module_from_spec", "importlib.util.spec_from_loader", "importlib.machinery",
       "imp.load_source", "imp.load_module", "zipimport")
_names("dynamic_import", LOW, "imports a module by name", "importlib.import_module")
_names("native_access", CRITICAL, "reaches native memory and C functions", "ctypes", "_ctypes",
       "cffi")
_names("native_access", MEDIUM, "maps memory", "mmap.mmap")
_names("network", HIGH, "uses the network", "socket", "_socket", "socketserver", "ssl.wrap_socket",
       "urllib.request", "urllib.urlopen", "urllib2", "urllib3", "http.client", "http.server",
       "httplib", "requests", "httpx", "aiohttp", "ftplib", "smtplib", "poplib", "imaplib",
       "nntplib", "telnetlib", "xmlrpc.client", "xmlrpc.server", "paramiko", "pycurl", "websocket",
       "websockets", "asyncio.open_connection", "asyncio.start_server",
       "asyncio.open_unix_connection", "asyncio.start_unix_server", "webbrowser", "boto3",
       "botocore", "grpc", "zmq", "scapy")
_names("unsafe_deserialization", HIGH, "loads a pickle-like format, which runs code",
       "pickle.load", "pickle.loads", "pickle.Unpickler", "marshal.load", "marshal.loads",
       "shelve.open", "shelve.DbfilenameShelf", "dill.load", "dill.loads", "dill.Unpickler",
       "cloudpickle.load", "cloudpickle.loads", "joblib.load", "pandas.read_pickle", "torch.load",
       "jsonpickle.decode", "yaml.unsafe_load", "yaml.unsafe_load_all", "yaml.UnsafeLoader",
       "copyreg")
_names("builtins_access", HIGH, "reaches every builtin by name", "builtins", "builtins.globals",
       "builtins.__builtins__")
_names("builtins_access", HIGH, "reaches every loaded module by name", "sys.modules")
_names("builtins_access", MEDIUM, "reads the calling namespace", "builtins.locals")
# Code a run imports from where it can write (/mnt/data, /tmp): what it runs is not in this cell, so
# it is not analysed here (issue 24: sys.path.append("/mnt/data"); import helper gave no finding).
_names("import_path", HIGH, "imports code from a path it chooses, which this analysis does not see",
       "sys.path", "sys.path_hooks", "sys.meta_path", "sys.path_importer_cache", "site.addsitedir",
       "importlib.util.spec_from_file_location", "importlib.machinery.SourceFileLoader",
       "importlib.machinery.SourcelessFileLoader", "importlib.machinery.ExtensionFileLoader",
       "importlib.machinery.PathFinder", "importlib.machinery.FileFinder", "zipimport", "imp",
       "importlib._bootstrap", "importlib._bootstrap_external", "_frozen_importlib",
       "_frozen_importlib_external", "_imp", "pkgutil.get_importer", "pkgutil.walk_packages",
       "pkgutil.ImpImporter", "pkgutil.ImpLoader", "site.addpackage", "site.addsitepackages",
       "site.addusersitepackages", "site.venv", "site.main", "site.execsitecustomize",
       "site.execusercustomize")
_names("introspection", HIGH, "walks interpreter frames or objects (a classic sandbox escape)",
       "sys._getframe", "sys._current_frames", "inspect.currentframe", "gc.get_objects",
       "gc.get_referrers", "gc.get_referents")
_names("introspection", MEDIUM, "inspects the call stack", "inspect.stack", "inspect.trace",
       "inspect.getouterframes", "sys.settrace", "sys.setprofile", "threading.settrace")
_names("environment", LOW, "reads the whole environment", "os.environ", "os.environb")
_names("environment", LOW, "reads an environment variable", "os.getenv", "os.getenvb")
_names("environment", LOW, "changes the environment", "os.putenv", "os.unsetenv")
_names("dynamic_attribute", MEDIUM, "reads attributes by a name given at run time",
       "builtins.getattr", "builtins.vars")

EXACT_ONLY = {"builtins"}  # builtins.print is not "the builtins module"

# Modules any call into which runs a program (subprocess.run, sh.ls(), pexpect.spawn(...)): a call
# is critical even where the table has only the module (high, for its import and its constants).
PROGRAM_MODULES = {"subprocess", "sh", "plumbum", "pexpect"}

# Builtins that name an entry above, plus those with a call rule below.
BUILTIN_NAMES = {"eval", "exec", "compile", "__import__", "globals", "locals", "vars", "getattr",
                 "setattr", "delattr", "open", "bytes", "bytearray", "chr", "__builtins__",
                 "breakpoint", "input", "print", "str", "memoryview"}

# Referring to these without calling them (f = eval; map(getattr, ...)) hides their calls.
HIDDEN_WHEN_PASSED = {"builtins.eval", "builtins.exec", "builtins.compile", "builtins.__import__",
                      "builtins.getattr", "builtins.globals", "builtins.vars",
                      "importlib.import_module"}

# Modules whose dangerous members a computed name reaches (getattr, __dict__, vars()); a name
# like these that the code uses without binding it is taken to be the module (a session's earlier
# cell imported it).
FLAGGED_MODULES = {"os", "posix", "sys", "builtins", "subprocess", "_posixsubprocess", "pty",
                   "importlib", "ctypes", "cffi", "socket", "pickle", "marshal", "shelve", "dill",
                   "shutil", "runpy", "requests", "httpx", "gc", "inspect"}

# Reported wherever they appear, even inside a longer expression (sys.modules["os"].system).
ALWAYS_REPORTED = {"sys.modules", "builtins"}

# Aliases of modules: one name for each.
MODULE_ALIASES = {"posix": "os", "nt": "os", "_io": "io", "cPickle": "pickle", "_pickle": "pickle",
                  "__builtin__": "builtins", "pathlib.PosixPath": "pathlib.Path",
                  "pathlib.PurePath": "pathlib.Path", "pathlib.PurePosixPath": "pathlib.Path",
                  "pathlib.WindowsPath": "pathlib.Path"}

# Calls whose result is data decoded at run time (what hides a payload from a reader).
DECODERS = {"bytes.fromhex", "bytearray.fromhex", "builtins.bytes", "builtins.bytearray",
            "builtins.bytes.fromhex", "builtins.bytearray.fromhex", "builtins.chr",
            "builtins.memoryview", "base64", "binascii", "codecs.decode", "codecs.encode",
            "zlib.decompress", "bz2.decompress", "lzma.decompress", "gzip.decompress",
            "marshal.loads", "pickle.loads", "quopri.decodestring", "uu.decode"}
DECODING_METHODS = {"decode", "fromhex", "b64decode", "b32decode", "b16decode", "b85decode",
                    "a85decode", "decodebytes", "urlsafe_b64decode", "decompress", "unhexlify",
                    "a2b_base64", "a2b_hex", "translate", "tobytes"}

# Calls that write or delete files: which argument is the path ("write" / "delete"), by position
# and keyword.
FILE_CALLS = {
    "os.remove": (("delete", 0, "path"),),
    "os.unlink": (("delete", 0, "path"),),
    "os.rmdir": (("delete", 0, "path"),),
    "os.removedirs": (("delete", 0, "name"),),
    "shutil.rmtree": (("delete", 0, "path"),),
    "os.rename": (("delete", 0, "src"), ("write", 1, "dst")),
    "os.renames": (("delete", 0, "old"), ("write", 1, "new")),
    "os.replace": (("delete", 0, "src"), ("write", 1, "dst")),
    "shutil.move": (("delete", 0, "src"), ("write", 1, "dst")),
    "shutil.copy": (("write", 1, "dst"),),
    "shutil.copy2": (("write", 1, "dst"),),
    "shutil.copyfile": (("write", 1, "dst"),),
    "shutil.copytree": (("write", 1, "dst"),),
    "os.truncate": (("write", 0, "path"),),
    "os.chmod": (("write", 0, "path"),),
    "os.chown": (("write", 0, "path"),),
    "os.lchown": (("write", 0, "path"),),
    "os.symlink": (("write", 1, "dst"),),
    "os.link": (("write", 1, "dst"),),
    "os.mkdir": (("write", 0, "path"),),
    "os.makedirs": (("write", 0, "name"),),
    "os.mkfifo": (("write", 0, "path"),),
    "os.mknod": (("write", 0, "path"),),
    "os.utime": (("write", 0, "path"),),
}
OPEN_CALLS = {"builtins.open", "io.open", "codecs.open", "gzip.open", "bz2.open", "lzma.open",
              "io.FileIO"}
PATH_METHODS = {"write_text": "write", "write_bytes": "write", "touch": "write", "mkdir": "write",
                "symlink_to": "write", "hardlink_to": "write", "chmod": "write", "unlink": "delete",
                "rmdir": "delete", "rename": "delete", "replace": "delete"}
# Methods of data libraries that write their first argument (df.to_csv("/etc/x")).
WRITER_METHODS = {"to_csv", "to_json", "to_parquet", "to_excel", "to_feather", "to_hdf",
                  "to_html", "to_latex", "to_markdown", "to_pickle", "to_stata", "to_xml",
                  "to_orc", "to_sql", "savefig", "save", "savez", "savez_compressed", "savetxt",
                  "tofile", "to_file", "write_image", "write_html"}
OS_OPEN_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}

# Attributes that reach the interpreter's internals from any object.
INTROSPECTION_ATTRS = {
    "__subclasses__": HIGH, "__globals__": HIGH, "__code__": HIGH, "__builtins__": HIGH,
    "f_globals": HIGH, "f_builtins": HIGH, "f_locals": HIGH, "f_back": HIGH, "gi_frame": HIGH,
    "cr_frame": HIGH, "ag_frame": HIGH, "tb_frame": HIGH, "co_code": HIGH, "__closure__": MEDIUM,
    "__bases__": MEDIUM, "__base__": MEDIUM, "__mro__": MEDIUM, "__reduce__": MEDIUM,
    "__reduce_ex__": MEDIUM, "__getattribute__": MEDIUM, "__self__": MEDIUM, "__loader__": MEDIUM,
}
ESCAPE_ATTRS = {"__subclasses__", "__globals__", "__builtins__", "f_globals", "f_builtins"}

SENSITIVE_PREFIXES = ("/proc/", "/dev/mem", "/dev/kmem", "/dev/port", "/sys/kernel")
URL_PREFIXES = ("http://", "https://", "ftp://", "ws://", "wss://")

# Roles of a node in its parent, for findings reported once, at the outermost expression.
OTHER, CALLEE, BASE = 0, 1, 2

_AST = _ast.AST
_Name, _Attribute, _Call, _Subscript = _ast.Name, _ast.Attribute, _ast.Call, _ast.Subscript
_Constant, _BinOp, _JoinedStr, _FormattedValue = _ast.Constant, _ast.BinOp, _ast.JoinedStr, _ast.FormattedValue
_Load, _Import, _ImportFrom = _ast.Load, _ast.Import, _ast.ImportFrom
_FunctionDef, _AsyncFunctionDef = _ast.FunctionDef, _ast.AsyncFunctionDef
_STRING_OPS = {"lower", "upper", "strip", "lstrip", "rstrip", "replace", "title", "capitalize",
               "casefold", "swapcase", "format"}


class _GiveUp(Exception):
    """An expression too deep to follow, or the time budget spent."""


_NORMALISED = {}


def _normalise(q):
    found = _NORMALISED.get(q)
    if found is None:
        found = _normalise_uncached(q)
        if len(_NORMALISED) < 10_000:
            _NORMALISED[q] = found
    return found


def _normalise_uncached(q):
    if q in MODULE_ALIASES:
        return MODULE_ALIASES[q]
    head, dot, rest = q.partition(".")
    if head in MODULE_ALIASES:
        return MODULE_ALIASES[head] + dot + rest
    two = q.split(".", 2)
    if len(two) > 2 and two[0] + "." + two[1] in MODULE_ALIASES:
        return MODULE_ALIASES[two[0] + "." + two[1]] + "." + two[2]
    return q


_LOOKUPS = {}


def _lookup_prefix(q):
    found = NAMES.get(q)
    if found is None:
        parts = q.split(".")
        for i in range(len(parts) - 1, 0, -1):
            key = ".".join(parts[:i])
            if key in NAMES and key not in EXACT_ONLY:
                found = NAMES[key]
                break
    return found


def lookup(q):
    """The rule entry of a qualified name, or None (cached: names repeat).

    A module's attributes include the modules it imported: pandas.io.clipboard.subprocess is the
    subprocess module, multiprocessing.connection.socket the socket module, tempfile._os the os
    module. So where the name itself has no entry, the chain is followed to the flagged module it
    reaches (issue 24)."""
    found = _LOOKUPS.get(q, 0)
    if found != 0:
        return found
    found = _lookup_prefix(q)
    if found is None:
        parts = q.split(".")
        for i in range(1, len(parts)):
            # Modules keep what they import under a private name too (tempfile._os is os).
            for part in {parts[i], parts[i].lstrip("_")}:
                if part in FLAGGED_MODULES or part in PROGRAM_MODULES:
                    found = found or _lookup_prefix(_normalise(".".join([part] + parts[i + 1:])))
            if found is not None:
                break
    if len(_LOOKUPS) < 10_000:
        _LOOKUPS[q] = found
    return found


def _is_name(v):
    return not v.startswith("\0")


class Analysis:
    def __init__(self, code, deadline, depth=0):
        self.code = code
        self.deadline = deadline
        self.depth = depth  # nesting of exec("...") analyses
        self.lines = None
        self.findings = {}  # (rule, line) -> finding
        self.env = {}  # name -> set of values
        self.stars = []  # modules imported with *
        self.memo = {}
        self.reading = None  # names a resolution reads, while bindings are propagated
        self.todo = []
        self.incomplete = None
        self.functions = 0
        self.imports = 0

    # -- findings -------------------------------------------------------------------------------

    def line_text(self, line):
        if self.lines is None:
            self.lines = self.code.split("\n")
        if line is None or not 0 < line <= len(self.lines):
            return None
        return self.lines[line - 1]

    def column(self, line, byte_offset):
        """1-based character column of a UTF-8 byte offset in a line (ast counts bytes)."""
        text = self.line_text(line)
        if text is None or byte_offset is None:
            return None if byte_offset is None else byte_offset + 1
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "ignore")) + 1

    def add(self, rule, severity, message, node=None, line=None, column=None):
        if node is not None:
            line = getattr(node, "lineno", None)
            column = self.column(line, getattr(node, "col_offset", None))
        key = (rule, line)
        old = self.findings.get(key)
        if old is not None and RANK[old["severity"]] >= RANK[severity]:
            return
        text = self.line_text(line)
        snippet = None if text is None else text.strip()[:MAX_SNIPPET]
        self.findings[key] = {"rule": rule, "severity": severity, "message": message[:500],
                              "line": line, "column": column, "snippet": snippet}

    def give_up(self, why, node=None):
        if self.incomplete is None:
            self.incomplete = why
            self.add("analysis_incomplete", HIGH, why, node)

    # -- values -------------------------------------------------------------------------------

    def bind(self, name, values):
        """Adds what a name may hold; True when that changed anything."""
        if not values:
            values = {UNKNOWN}
        old = self.env.get(name)
        if old is None:
            new = set(values)
        elif values <= old:
            return False
        else:
            new = old | values
        if len(new) > MAX_VALUES:
            new = {v for v in new if (_is_name(v) and lookup(v)) or v[:2] in (DECODED, GLOBALS,
                                                                             DYNAMIC_MODULE)}
            new.add(UNKNOWN)
            if old is not None and new == old:
                return False
        self.env[name] = new
        return True

    def resolve(self, node, depth=0):
        """What an expression may evaluate to (a frozenset of values; empty: not followed)."""
        if depth > MAX_DEPTH:
            raise _GiveUp("an expression nested deeper than %d levels was not followed" % MAX_DEPTH)
        memo = self.memo
        if memo is None:
            return self._resolve(node, depth)
        key = id(node)
        found = memo.get(key)
        if found is None:
            found = self._resolve(node, depth)
            memo[key] = found
        return found

    def _resolve(self, node, depth):
        t = type(node)
        if t is _Name:
            return self.name_values(node.id)
        if t is _Attribute:
            return self.attribute_values(self.resolve(node.value, depth + 1), node.attr)
        if t is _Call:
            return self.call_values(node, depth)
        if t is _Subscript:
            return self.subscript_values(node, depth)
        if t is _ast.NamedExpr:
            return self.resolve(node.value, depth + 1)
        if t is _ast.IfExp:
            return self.resolve(node.body, depth + 1) | self.resolve(node.orelse, depth + 1)
        if t is _ast.BoolOp:
            out = frozenset()
            for v in node.values:
                out |= self.resolve(v, depth + 1)
            return out
        if t is _BinOp and type(node.op) is _ast.Div:
            left = self.resolve(node.left, depth + 1)
            right = self.fold(node.right, depth + 1)
            if right is not None:
                return frozenset(PATH + _join(v[2:], right) for v in left if v[:2] == PATH)
        s = self.fold(node, depth)
        if s is not None:
            return frozenset((CONST + s,))
        return frozenset()

    def name_values(self, name):
        if self.reading is not None:
            self.reading.add(name)
        values = self.env.get(name)
        out = set(values) if values else set()
        if name in BUILTIN_NAMES:
            out.add("builtins" if name == "__builtins__" else "builtins." + name)
        if values is None:
            if name in FLAGGED_MODULES:  # imported by an earlier cell of the session, say
                out.add(_normalise(name))
            for module in self.stars:
                out.add(module + "." + name)
        return frozenset(out)

    def attribute_values(self, base, attr):
        out = set()
        for v in base:
            if _is_name(v):
                if attr == "__dict__":
                    out.add(NAMESPACE + v)
                elif attr == "__self__" and v.startswith("builtins."):
                    out.add("builtins")
                else:
                    out.add(_normalise(v + "." + attr))
            elif (v == GLOBALS or v.startswith(NAMESPACE)) and attr in ("get", "__getitem__"):
                out.add(v + "." + attr)
        if attr in ("__globals__", "f_globals"):
            out.add(GLOBALS)
        elif attr in ("__builtins__", "f_builtins"):
            out.add("builtins")
        return frozenset(out)

    def subscript_values(self, node, depth):
        base = self.resolve(node.value, depth + 1)
        if not base:
            return base
        key = self.fold(node.slice, depth + 1)
        if key is None:
            return frozenset()
        return self.item_values(base, key)

    def item_values(self, base, key):
        out = set()
        for v in base:
            if v in (GLOBALS, GLOBALS + ".get", GLOBALS + ".__getitem__"):
                out |= {"builtins"} if key == "__builtins__" else self.name_values(key)
            elif v.startswith(NAMESPACE):
                out.add(_normalise(v[2:] + "." + key))
            elif v == "builtins":
                out.add("builtins." + key)
            elif v in ("sys.modules", "sys.modules.get", "sys.modules.__getitem__"):
                out.add(_normalise(key))
        return frozenset(out)

    def call_values(self, node, depth):
        funcs = self.resolve(node.func, depth + 1)
        out = set()
        args = node.args
        for f in funcs:
            if f in ("builtins.__import__", "importlib.__import__", "importlib.import_module"):
                name = self.fold(args[0], depth + 1) if args else None
                if name is None:
                    out.add(DYNAMIC_MODULE)
                else:
                    full = f == "importlib.import_module" or _has_fromlist(node)
                    out.add(_normalise(name if full else name.split(".")[0]))
            elif f == "builtins.getattr" and len(args) >= 2:
                name = self.fold(args[1], depth + 1)
                if name is not None:
                    out |= self.attribute_values(self.resolve(args[0], depth + 1), name)
            elif f in ("builtins.globals", "builtins.locals") or (f == "builtins.vars" and not args):
                out.add(GLOBALS)
            elif f == "builtins.vars" and args:
                out |= {NAMESPACE + v for v in self.resolve(args[0], depth + 1) if _is_name(v)}
            elif _is_lookup(f):
                key = self.fold(args[0], depth + 1) if args else None
                if key is not None:
                    out |= self.item_values({f.rsplit(".", 1)[0]}, key)
            elif f == "pathlib.Path":
                p = self.fold(args[0], depth + 1) if args else "."
                if p is not None:
                    out.add(PATH + p)
            elif f == "pathlib.Path.home":
                out.add(PATH + "/tmp")  # HOME in the sandbox
            elif f == "pathlib.Path.cwd":
                out.add(PATH + WORKSPACE)
            elif _is_decoder(f):
                out.add(DECODED)
        if type(node.func) is _Attribute:
            if node.func.attr in DECODING_METHODS:
                out.add(DECODED)
            elif node.func.attr == "joinpath" and args:
                parts = [self.fold(a, depth + 1) for a in args]
                if None not in parts:
                    for v in self.resolve(node.func.value, depth + 1):
                        if v[:2] == PATH:
                            p = v[2:]
                            for part in parts:
                                p = _join(p, part)
                            out.add(PATH + p)
        if not out:
            s = self.fold(node, depth)
            if s is not None:
                out.add(CONST + s)
        return frozenset(out)

    def fold(self, node, depth=0):
        """The string an expression always evaluates to, or None (also when it is too deep to
        follow: a string not known counts as the worse case wherever one is looked for)."""
        if depth > MAX_DEPTH:
            return None
        t = type(node)
        if t is _Constant:
            v = node.value
            return v if type(v) is str and len(v) <= MAX_CONST else None
        if t is _Name:
            if self.reading is not None:
                self.reading.add(node.id)
            values = self.env.get(node.id)
            if values and len(values) == 1:
                (v,) = values
                if v.startswith(CONST):
                    return v[2:]
            return None
        if t is _BinOp:
            op = type(node.op)
            if op is _ast.Add:
                left = self.fold(node.left, depth + 1)
                right = self.fold(node.right, depth + 1) if left is not None else None
                if right is not None and len(left) + len(right) <= MAX_CONST:
                    return left + right
            elif op is _ast.Mult:
                s, n = node.left, node.right
                if type(s) is _Constant and type(s.value) is int:
                    s, n = n, s
                text = self.fold(s, depth + 1)
                if text is not None and type(n) is _Constant and type(n.value) is int:
                    if 0 <= len(text) * n.value <= MAX_CONST:
                        return text * n.value
            elif op is _ast.Mod:
                fmt = self.fold(node.left, depth + 1)
                if fmt is not None:
                    parts = node.right.elts if type(node.right) is _ast.Tuple else [node.right]
                    values = [self.fold(p, depth + 1) for p in parts]
                    if None not in values:
                        try:
                            out = fmt % tuple(values)
                        except (TypeError, ValueError):
                            return None
                        return out if len(out) <= MAX_CONST else None
            return None
        if t is _JoinedStr:
            out = []
            for part in node.values:
                if type(part) is _FormattedValue:
                    if part.format_spec is not None or part.conversion not in (-1, 115):
                        return None
                    part = part.value
                s = self.fold(part, depth + 1)
                if s is None:
                    return None
                out.append(s)
            s = "".join(out)
            return s if len(s) <= MAX_CONST else None
        if t is _Subscript and type(node.slice) is _ast.Slice:
            s = self.fold(node.value, depth + 1)
            if s is None:
                return None
            bounds = []
            for b in (node.slice.lower, node.slice.upper, node.slice.step):
                if b is None:
                    bounds.append(None)
                    continue
                n = _int_value(b)
                if n is None:
                    return None
                bounds.append(n)
            try:
                return s[slice(*bounds)]
            except ValueError:
                return None
        if t is _Call and type(node.func) is _Attribute:
            method = node.func.attr
            if method == "join" and len(node.args) == 1 and type(node.args[0]) in (_ast.List,
                                                                                    _ast.Tuple):
                sep = self.fold(node.func.value, depth + 1)
                parts = [self.fold(e, depth + 1) for e in node.args[0].elts] if sep is not None else [None]
                if None not in parts:
                    s = sep.join(parts)
                    return s if len(s) <= MAX_CONST else None
            elif method in _STRING_OPS and not node.keywords:
                base = self.fold(node.func.value, depth + 1)
                args = [self.fold(a, depth + 1) for a in node.args] if base is not None else [None]
                if None not in args:
                    try:
                        s = getattr(str, method)(base, *args)
                    except (TypeError, ValueError, IndexError, KeyError):
                        return None
                    return s if len(s) <= MAX_CONST else None
        if t is _Call and type(node.func) is _Attribute and node.func.attr == "join" and node.args \
                and "os.path.join" in self.resolve(node.func, depth + 1):
            parts = [self.fold(a, depth + 1) for a in node.args]
            if None not in parts:
                p = parts[0]
                for part in parts[1:]:
                    p = _join(p, part)
                return p if len(p) <= MAX_CONST else None
        if t is _Call and type(node.func) is _Name and node.func.id == "chr" and len(node.args) == 1:
            n = _int_value(node.args[0])
            if n is not None and 0 <= n < 0x110000:
                return chr(n)
        return None

    # -- one walk: bindings, counts, and the nodes to check ------------------------------------

    def collect(self, tree):
        """Walks the tree once (iteratively: no recursion however deep it is): every binding, the
        counts, and the nodes the checks look at, each with its role in its parent."""
        bindings = []  # (name, value node, or None for "not followed")
        todo = self.todo = []  # (node, role) to check once the names are known
        stack = [(tree, OTHER)]
        count = 0
        while stack:
            node, role = stack.pop()
            count += 1
            if count & 1023 == 0 and time.monotonic() > self.deadline:
                raise _GiveUp("the analysis ran out of time while reading the code")
            t = type(node)
            if t is _Name:
                if type(node.ctx) is _Load:
                    todo.append((node, role))
                continue
            if t is _Constant:
                if type(node.value) is str:
                    todo.append((node, role))
                continue
            if t is _Call:
                todo.append((node, role))
                stack.append((node.func, CALLEE))
                stack.extend((a, OTHER) for a in node.args)
                stack.extend((k.value, OTHER) for k in node.keywords)
                continue
            if t is _Attribute:
                todo.append((node, role))
                stack.append((node.value, BASE))
                continue
            if t is _Subscript:
                todo.append((node, role))
                stack.append((node.value, BASE))
                stack.append((node.slice, OTHER))
                continue
            if t is _ast.Expr and type(node.value) is _Constant:
                continue  # a docstring, or a bare literal: nothing it names is used
            if t is _ast.Assign:
                for target in node.targets:
                    _pair(target, node.value, bindings)
            elif t is _ast.AnnAssign or t is _ast.AugAssign:
                if type(node.target) is _Name:
                    bindings.append((node.target.id, node.value if t is _ast.AnnAssign else None))
            elif t is _ast.NamedExpr:
                bindings.append((node.target.id, node.value))
            elif t is _Import:
                self.imports += 1
                todo.append((node, role))
                for alias in node.names:
                    if alias.asname:
                        self.bind(alias.asname, {_normalise(alias.name)})
                    else:
                        top = alias.name.split(".")[0]
                        self.bind(top, {_normalise(top)})
            elif t is _ImportFrom:
                self.imports += 1
                todo.append((node, role))
                module = _normalise(node.module or "") if not node.level else None
                for alias in node.names:
                    if alias.name == "*":
                        if module:
                            self.stars.append(module)
                        continue
                    self.bind(alias.asname or alias.name,
                              {_normalise(module + "." + alias.name)} if module else {UNKNOWN})
            elif t is _FunctionDef or t is _AsyncFunctionDef:
                self.functions += 1
                bindings.append((node.name, None))
            elif t is _ast.ClassDef:
                bindings.append((node.name, None))
            elif t is _ast.arg:
                bindings.append((node.arg, None))
            elif t is _ast.For or t is _ast.AsyncFor or t is _ast.comprehension:
                _unknown_targets(node.target, bindings)
            elif t is _ast.withitem and node.optional_vars is not None:
                _unknown_targets(node.optional_vars, bindings)
            elif t is _ast.ExceptHandler and node.name:
                bindings.append((node.name, None))
            elif t is _ast.MatchAs or t is _ast.MatchStar:
                if node.name:
                    bindings.append((node.name, None))
            for field in node._fields:
                if field == "ctx":
                    continue
                v = getattr(node, field, None)
                if type(v) is list:
                    stack.extend((x, OTHER) for x in v if isinstance(x, _AST))
                elif isinstance(v, _AST):
                    stack.append((v, OTHER))
        self.propagate(bindings)

    def propagate(self, bindings):
        """Binds every name to what its assignments may give it, until nothing changes: a binding
        is looked at again whenever a name its value read has changed (a worklist; each name
        changes at most MAX_VALUES + 2 times, so it ends)."""
        readers = {}  # name -> indices of the bindings whose value read it
        todo = []
        for i, (name, value) in enumerate(bindings):
            if value is None:
                self.bind(name, {UNKNOWN})
            else:
                todo.append(i)
        self.memo = None  # values change meanwhile: nothing is remembered
        queued = set(todo)
        done = 0
        try:
            while todo:
                i = todo.pop()
                queued.discard(i)
                done += 1
                if done & 255 == 0 and time.monotonic() > self.deadline:
                    raise _GiveUp("the analysis ran out of time following names")
                name, value = bindings[i]
                self.reading = read = set()
                values = self.safe_resolve(value)
                self.reading = None
                for n in read:
                    readers.setdefault(n, set()).add(i)
                if self.bind(name, set(values)):
                    for j in readers.get(name, ()):
                        if j not in queued:
                            queued.add(j)
                            todo.append(j)
        finally:
            self.reading = None
            self.memo = {}

    def safe_resolve(self, node):
        try:
            return self.resolve(node)
        except _GiveUp as e:
            self.give_up(str(e), node)
            return frozenset()

    # -- findings ------------------------------------------------------------------------------

    def check(self):
        for count, (node, role) in enumerate(self.todo):
            if count & 255 == 255 and time.monotonic() > self.deadline:
                self.give_up("the analysis ran out of time; some of the code was not checked", node)
                return
            t = type(node)
            try:
                if t is _Call:
                    self.check_call(node)
                    if role == OTHER:
                        self.report_values(node, self.resolve(node), "is used")
                elif t is _Attribute:
                    self.check_attribute(node, role)
                elif t is _Subscript:
                    self.check_subscript(node, role)
                elif t is _Name:
                    self.check_name(node, role)
                elif t is _Constant:
                    self.check_string(node)
                else:
                    self.check_import(node)
            except _GiveUp as e:
                self.give_up(str(e), node)

    def report_values(self, node, values, how):
        """Findings for the flagged things an expression may be (used as a value, not called)."""
        for v in values:
            if v == GLOBALS:
                self.add("builtins_access", HIGH, "the global namespace %s, which holds"
                         " __builtins__ and every name of the code" % how, node)
            elif v == DYNAMIC_MODULE:
                self.add("dynamic_import", HIGH, "a module imported by a computed name %s" % how, node)
            elif v.startswith(NAMESPACE) and v[2:].split(".")[0] in FLAGGED_MODULES:
                self.add("dynamic_attribute", HIGH, "the namespace of %s %s: any of its functions"
                         " can be reached by a computed name" % (v[2:], how), node)
            elif _is_name(v):
                entry = lookup(v)
                if entry is None:
                    continue
                rule, severity, what = entry
                if v in HIDDEN_WHEN_PASSED:
                    severity = max(severity, HIGH, key=RANK.get)
                    what = "hides its calls from a reader"
                self.add(rule, severity, "%s %s (%s)" % (_short(v), how, what), node)

    def check_name(self, node, role):
        name = node.id
        if name == "__builtins__":
            self.add("builtins_access", HIGH, "__builtins__ reaches every builtin by name", node)
        if role != OTHER:
            return
        values = self.resolve(node)
        for v in values:
            if _short(v) == name or v == _normalise(name):
                how = "is used as a value"
            else:
                how = "through the name '%s'" % name
            self.report_values(node, (v,), how)

    def check_attribute(self, node, role):
        attr = node.attr
        severity = INTROSPECTION_ATTRS.get(attr)
        if severity is not None:
            rule = "builtins_access" if attr == "__builtins__" else "introspection"
            self.add(rule, severity, "attribute %s%s" % (attr, " (a classic sandbox escape)"
                                                         if attr in ESCAPE_ATTRS else ""), node)
        if type(node.ctx) is not _Load:
            base = self.resolve(node.value)
            if "builtins" in base:
                self.add("builtins_access", MEDIUM, "replaces builtins.%s" % attr, node)
            elif "sys" in base and attr in ("path", "meta_path", "path_hooks"):
                self.add("import_path", HIGH, "changes the import path (sys.%s): code imported"
                         " from it is not analysed here" % attr, node)
            return
        values = self.resolve(node)
        if role == OTHER:
            self.report_values(node, values, "is used")
        elif not ALWAYS_REPORTED.isdisjoint(values):
            self.report_values(node, ALWAYS_REPORTED & values, "is used")

    def check_subscript(self, node, role):
        base = self.resolve(node.value)
        if not base:
            return
        key = self.fold(node.slice)
        ctx = type(node.ctx)
        if "os.environ" in base or "os.environb" in base:
            if ctx is _Load:
                if key is None:
                    self.add("environment", LOW, "reads an environment variable chosen at run"
                             " time", node)
                else:
                    self.add("environment", LOW, "reads the environment variable %s" % key[:100],
                             node)
            else:
                self.add("environment", LOW, "changes the environment", node)
            return
        if ctx is not _Load and any(v in ("sys.path", "sys.meta_path", "sys.path_hooks")
                                    for v in base):
            self.add("import_path", HIGH, "changes the import path (sys.path[...] = ...): code"
                     " imported from it is not analysed here", node)
            return
        if key is None:
            for v in base:
                if v in (GLOBALS, "builtins") or (v.startswith(NAMESPACE) and
                                                  v[2:].split(".")[0] in FLAGGED_MODULES):
                    what = {GLOBALS: "the global namespace", "builtins": "__builtins__"}.get(
                        v, "the namespace of " + v[2:])
                    self.add("dynamic_attribute", HIGH, "%s is indexed by a computed name" % what,
                             node)
                elif v == "sys.modules":
                    self.add("dynamic_import", HIGH, "sys.modules is indexed by a computed name",
                             node)
            return
        if key == "__builtins__":
            self.add("builtins_access", HIGH, "__builtins__ reaches every builtin by name", node)
        if role == OTHER and ctx is _Load:
            self.report_values(node, self.resolve(node), "is used")

    def check_string(self, node):
        s = node.value
        if s.startswith(SENSITIVE_PREFIXES):
            head = s[:200]
            if head.startswith("/proc/") and head.rstrip("/").rsplit("/", 1)[-1] in (
                    "mem", "maps", "pagemap", "kcore", "kmem"):
                self.add("native_access", HIGH, "names process memory (%s)" % head, node)
            elif head.startswith("/proc/") and head.endswith("/environ"):
                self.add("environment", LOW, "names the environment of a process (%s)" % head,
                         node)
            elif head.startswith("/dev/") or head.startswith("/sys/kernel"):
                self.add("native_access", HIGH, "names raw memory or the kernel (%s)" % head, node)
        elif s.startswith(URL_PREFIXES):
            self.add("network", MEDIUM, "a URL (%s): fetching it needs the network" % s[:100], node)

    def check_import(self, node):
        if type(node) is _Import:
            for alias in node.names:
                self.report_import(node, _normalise(alias.name), alias.asname)
            return
        if node.level:
            return
        module = _normalise(node.module or "")
        self.report_import(node, module, None)
        for alias in node.names:
            if alias.name == "*":
                if module.split(".")[0] in FLAGGED_MODULES:
                    self.add("dynamic_attribute", MEDIUM, "from %s import * brings its functions"
                             " into scope under their own names" % module, node)
                continue
            self.report_import(node, _normalise(module + "." + alias.name), alias.asname or alias.name)

    def report_import(self, node, qualified, name):
        entry = lookup(qualified)
        if entry is None:
            return
        rule, severity, what = entry
        if rule in ("environment", "introspection") or qualified == "importlib.import_module":
            return  # reported where it is used
        if rule == "dynamic_code" or rule == "dynamic_import":
            severity = max(severity, HIGH, key=RANK.get)
        self.add(rule, severity, "imports %s%s (%s)" % (
            qualified, "" if name is None or name == qualified.rsplit(".", 1)[-1] else " as " + name,
            what), node)

    # -- calls ----------------------------------------------------------------------------------

    def check_call(self, node):
        funcs = self.resolve(node.func)
        via = ""
        if type(node.func) is _Name and node.func.id not in BUILTIN_NAMES:
            via = " (through the name '%s')" % node.func.id
        for f in funcs:
            if _is_lookup(f):
                self.check_lookup_call(node, f)
            if not _is_name(f):
                continue
            handler = CALL_HANDLERS.get(f)
            if handler is not None:
                handler(self, node, f, via)
                continue
            if f in FILE_CALLS:
                self.check_file_call(node, f)
                continue
            if f.startswith("os.environ."):
                self.check_environ_call(node, f)
                continue
            entry = lookup(f)
            if entry is not None:
                rule, severity, what = entry
                if rule == "process_execution" and f.split(".", 1)[0] in PROGRAM_MODULES:
                    severity = CRITICAL  # a call into it runs a program
                    if f.startswith("subprocess") and _keyword_true(node, "shell"):
                        what = "runs a shell command (shell=True)"
                command = self.command_text(node)
                self.add(rule, severity, "%s%s: %s%s" % (_short(f), via, what, command), node)
        if type(node.func) is _Attribute:
            method = node.func.attr
            if method in PATH_METHODS:
                base = self.resolve(node.func.value)
                for v in base:
                    if v.startswith(PATH):
                        self.check_path(node, PATH_METHODS[method], v[2:], "Path.%s" % method)
                        if method in ("rename", "replace") and node.args:
                            self.check_path_arg(node, "write", node.args[0], "Path.%s" % method)
            elif method == "open" and any(v.startswith(PATH) for v in self.resolve(node.func.value)):
                mode = self.argument(node, 0, "mode")
                if self.writes(mode):
                    for v in self.resolve(node.func.value):
                        if v.startswith(PATH):
                            self.check_path(node, "write", v[2:], "Path.open")
            elif method in WRITER_METHODS and node.args:
                p = self.fold(node.args[0])
                if p is not None and p.startswith("/"):
                    self.check_path(node, "write", p, "." + method)

    def argument(self, node, position, keyword):
        for k in node.keywords:
            if k.arg == keyword:
                return k.value
        if len(node.args) > position and type(node.args[position]) is not _ast.Starred:
            return node.args[position]
        return None

    def command_text(self, node):
        if not node.args:
            return ""
        arg = node.args[0]
        s = self.fold(arg)
        if s is None and type(arg) in (_ast.List, _ast.Tuple):
            parts = [self.fold(e) for e in arg.elts]
            if None not in parts:
                s = " ".join(parts)
        return "" if s is None else " (%s)" % s[:80]

    def check_code_call(self, node, f, via):
        """eval / exec / compile: how the code they are given was made."""
        name = f.rsplit(".", 1)[-1]
        source = self.argument(node, 0, "source")
        if source is None:
            self.add("dynamic_code", CRITICAL, "%s%s with code not given" % (name, via), node)
            return
        if type(source) is _Constant and type(source.value) in (str, bytes):
            self.add("dynamic_code", HIGH if via else MEDIUM, "%s%s of a literal string" % (name, via),
                     node)
            self.analyse_nested(node, source.value, name)
            return
        text = self.fold(source)
        hidden = self.hidden_source(source)
        if hidden:
            self.add("dynamic_code", CRITICAL, "%s%s of code %s" % (name, via, hidden), node)
        elif text is not None:
            self.add("dynamic_code", CRITICAL, "%s%s of a string assembled from pieces (%r)"
                     % (name, via, text[:80]), node)
        else:
            self.add("dynamic_code", CRITICAL, "%s%s of code known only at run time" % (name, via),
                     node)
        if text is not None:
            self.analyse_nested(node, text, name)

    def hidden_source(self, source):
        """How the code given to exec was hidden, if it was: decoded, fetched, or reversed."""
        stack, seen = [source], 0
        while stack and seen < 2000:
            n = stack.pop()
            seen += 1
            t = type(n)
            if t in (_Name, _Attribute, _Call):
                for v in self.resolve(n):
                    if v == DECODED:
                        return "decoded at run time (%s)" % _describe(n)
                    if _is_name(v):
                        entry = lookup(v)
                        if entry is not None and entry[0] == "network":
                            return "fetched from the network"
            if t is _Call and type(n.func) is _Attribute and n.func.attr in DECODING_METHODS:
                return "decoded at run time (.%s())" % n.func.attr
            if t is _Subscript and type(n.slice) is _ast.Slice and n.slice.step is not None:
                return "reversed or sliced at run time"
            _push_children(stack, n, ("ctx",))
        return None

    def analyse_nested(self, node, text, name):
        if type(text) is bytes:
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError:
                return
        if self.depth >= MAX_NESTED or len(text) > 100_000:
            return
        inner = Analysis(text.replace("\r\n", "\n").replace("\r", "\n"), self.deadline,
                         self.depth + 1)
        try:
            tree = compile(inner.code, "<%s>" % name, "exec", PYCF_ONLY_AST | PYCF_ALLOW_TOP_LEVEL_AWAIT,
                           dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return
        inner.run(tree)
        for f in inner.findings.values():
            self.add(f["rule"], f["severity"], "in the code given to %s: %s" % (name, f["message"]),
                     node)

    def check_import_call(self, node, f, via):
        name_node = self.argument(node, 0, "name")
        plain = name_node is not None and type(name_node) is _Constant and type(name_node.value) is str
        name = self.fold(name_node) if name_node is not None else None
        short = _short(f)
        if name is None:
            self.add("dynamic_import", HIGH, "%s%s of a module named at run time (a computed"
                     " import)" % (short, via), node)
            return
        if not plain:
            self.add("dynamic_import", HIGH, "%s%s of a module name assembled from pieces (%r)"
                     % (short, via, name[:80]), node)
        elif f != "importlib.import_module":
            self.add("dynamic_import", HIGH if via else MEDIUM, "%s%s('%s')" % (short, via, name[:80]),
                     node)
        self.report_import(node, _normalise(name), None)

    def check_getattr(self, node, f, via):
        """getattr / setattr / delattr on a flagged module: by a literal name it is resolved (the
        call's value), by a computed one it is a finding of its own."""
        if len(node.args) < 2:
            return
        flagged = []
        for v in self.resolve(node.args[0]):
            if _is_name(v) and v.split(".")[0] in FLAGGED_MODULES:
                flagged.append(v)
            elif v == GLOBALS:
                flagged.append("the global namespace")
            elif v == DYNAMIC_MODULE:
                flagged.append("a module imported by a computed name")
        flagged.sort()
        name_node = node.args[1]
        name = self.fold(name_node)
        short = f.rsplit(".", 1)[-1]
        if flagged:
            if name is None:
                self.add("dynamic_attribute", HIGH, "%s%s on %s with a name known only at run time"
                         % (short, via, flagged[0]), node)
            elif type(name_node) is not _Constant:
                self.add("dynamic_attribute", HIGH, "%s%s on %s with a name assembled from pieces"
                         " (%r)" % (short, via, flagged[0], name[:80]), node)
            elif short != "getattr" and "builtins" in flagged:
                self.add("builtins_access", HIGH, "%s%s changes builtins.%s" % (short, via, name),
                         node)
        elif via:
            self.add("dynamic_attribute", MEDIUM, "%s%s" % (short, via), node)

    def check_lookup_call(self, node, f):
        """globals().get(name), vars(os).get(name), sys.modules.get(name) with a computed name."""
        if not node.args or self.fold(node.args[0]) is not None:
            return
        owner = f.rsplit(".", 1)[0]
        if owner == "sys.modules":
            self.add("dynamic_import", HIGH, "sys.modules is read by a computed name", node)
        elif owner == GLOBALS:
            self.add("dynamic_attribute", HIGH, "the global namespace is read by a computed name",
                     node)
        elif owner[2:].split(".")[0] in FLAGGED_MODULES:
            self.add("dynamic_attribute", HIGH, "the namespace of %s is read by a computed name"
                     % owner[2:], node)

    def check_globals_call(self, node, f, via):
        self.add("builtins_access", HIGH, "%s()%s gives the global namespace, with __builtins__"
                 % (f.rsplit(".", 1)[-1], via), node)

    def check_vars_call(self, node, f, via):
        if not node.args:
            self.check_globals_call(node, f, via)

    def check_open(self, node, f, via):
        path = self.argument(node, 0, "file" if f != "os.open" else "path")
        if path is None:
            return
        if f == "os.open":
            flags = self.argument(node, 1, "flags")
            writes = flags is None or any(type(n) in (_Attribute, _Name) and
                                          (getattr(n, "attr", None) or getattr(n, "id", None))
                                          in OS_OPEN_WRITE_FLAGS for n in _nodes(flags, 200))
            if type(flags) is _Constant and type(flags.value) is int:
                writes = flags.value & 0o3103 != 0  # O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND
        else:
            writes = self.writes(self.argument(node, 1, "mode"))
        if writes:
            self.check_path_arg(node, "write", path, _short(f) + via)

    def writes(self, mode_node):
        if mode_node is None:
            return False
        mode = self.fold(mode_node)
        if mode is None:
            return True  # not known: it may write
        return any(c in mode for c in "wax+")

    def check_file_call(self, node, f):
        for action, position, keyword in FILE_CALLS[f]:
            arg = self.argument(node, position, keyword)
            if arg is not None:
                self.check_path_arg(node, action, arg, _short(f))

    def check_path_arg(self, node, action, arg, what):
        values = [v[2:] for v in self.resolve(arg) if v.startswith(CONST) or v.startswith(PATH)]
        literal = self.fold(arg)
        if literal is not None:
            values = [literal]
        if not values:
            verb = "writes" if action == "write" else "deletes"
            self.add("file_" + action, MEDIUM, "%s %s a path known only at run time" % (what, verb),
                     node)
            return
        for p in values:
            self.check_path(node, action, p, what)

    def check_path(self, node, action, path, what):
        where = _outside_workspace(path)
        if where is None:
            return
        severity = MEDIUM if where.startswith("/tmp/") or where == "/tmp" else HIGH
        verb = "writes" if action == "write" else "deletes"
        self.add("file_" + action, severity, "%s %s %s, outside /mnt/data" % (what, verb, where[:150]),
                 node)

    def check_environ_call(self, node, f):
        method = f[len("os.environ."):]
        if method in ("get", "setdefault", "pop", "__getitem__", "__contains__"):
            key = self.fold(node.args[0]) if node.args else None
            if key is None:
                self.add("environment", LOW, "reads an environment variable chosen at run time",
                         node)
            else:
                self.add("environment", LOW, "reads the environment variable %s" % key[:100], node)
        else:
            self.add("environment", LOW, "reads the whole environment (os.environ.%s)" % method,
                     node)

    def check_getenv(self, node, f, via):
        key = self.fold(node.args[0]) if node.args else None
        if f in ("os.putenv", "os.unsetenv"):
            self.add("environment", LOW, "changes the environment", node)
        elif key is None:
            self.add("environment", LOW, "reads an environment variable chosen at run time", node)
        else:
            self.add("environment", LOW, "reads the environment variable %s" % key[:100], node)

    def check_numpy_load(self, node, f, via):
        if _keyword_true(node, "allow_pickle"):
            self.add("unsafe_deserialization", HIGH, "numpy.load with allow_pickle=True runs pickles",
                     node)

    def check_yaml_load(self, node, f, via):
        loader = self.argument(node, 1, "Loader")
        if loader is None or not any(v in ("yaml.SafeLoader", "yaml.CSafeLoader", "yaml.BaseLoader")
                                     for v in self.resolve(loader)):
            self.add("unsafe_deserialization", HIGH, "yaml.load without SafeLoader can build any"
                     " Python object", node)

    # -- whole ---------------------------------------------------------------------------------

    def run(self, tree):
        try:
            self.collect(tree)
            self.check()
        except _GiveUp as e:
            self.give_up(str(e))
        except RecursionError:
            self.give_up("the code is too deeply nested to analyse")
        except MemoryError:
            self.give_up("the analysis ran out of memory")
        except Exception as e:  # a bug of the analyser must not hide what it found so far
            self.give_up("the analysis failed on this code (%s: %s)" % (type(e).__name__, e))


CALL_HANDLERS = {
    "builtins.eval": Analysis.check_code_call,
    "builtins.exec": Analysis.check_code_call,
    "builtins.compile": Analysis.check_code_call,
    "builtins.__import__": Analysis.check_import_call,
    "importlib.__import__": Analysis.check_import_call,
    "importlib.import_module": Analysis.check_import_call,
    "builtins.getattr": Analysis.check_getattr,
    "builtins.setattr": Analysis.check_getattr,
    "builtins.delattr": Analysis.check_getattr,
    "builtins.globals": Analysis.check_globals_call,
    "builtins.vars": Analysis.check_vars_call,
    "os.getenv": Analysis.check_getenv,
    "os.getenvb": Analysis.check_getenv,
    "os.putenv": Analysis.check_getenv,
    "os.unsetenv": Analysis.check_getenv,
    "numpy.load": Analysis.check_numpy_load,
    "yaml.load": Analysis.check_yaml_load,
    "yaml.load_all": Analysis.check_yaml_load,
}
for _f in OPEN_CALLS | {"os.open"}:
    CALL_HANDLERS[_f] = Analysis.check_open


def _short(q):
    return q[len("builtins."):] if q.startswith("builtins.") else q


def _int_value(node):
    if type(node) is _Constant and type(node.value) is int:
        return node.value
    if type(node) is _ast.UnaryOp and type(node.op) is _ast.USub and type(node.operand) is _Constant \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _keyword_true(node, name):
    for k in node.keywords:
        if k.arg == name:
            return not (type(k.value) is _Constant and not k.value.value)
        if k.arg is None:  # **kwargs: may hold it
            return True
    return False


def _has_fromlist(node):
    fromlist = node.args[3] if len(node.args) > 3 else next(
        (k.value for k in node.keywords if k.arg == "fromlist"), None)
    return fromlist is not None and not (type(fromlist) in (_ast.List, _ast.Tuple) and not fromlist.elts) \
        and not (type(fromlist) is _Constant and not fromlist.value)


def _is_lookup(q):
    """globals().get, vars(os).__getitem__, sys.modules.get ...: an item by name."""
    return q.endswith((".get", ".__getitem__")) and (
        q.startswith((GLOBALS, NAMESPACE)) or q.startswith("sys.modules."))


def _is_decoder(q):
    if q in DECODERS:
        return True
    head = q.split(".", 1)[0]
    return head in ("base64", "binascii") and ("decode" in q or "a2b" in q or "unhexlify" in q)


def _describe(node):
    if type(node) is _Call:
        node = node.func
    if type(node) is _Attribute:
        return "." + node.attr + "()"
    if type(node) is _Name:
        return node.id
    return "an expression"


def _nodes(node, limit):
    stack, out = [node], []
    while stack and len(out) < limit:
        n = stack.pop()
        out.append(n)
        _push_children(stack, n, ())
    return out


def _push_children(stack, n, skip):
    """Pushes the nodes right under n (a field's node, or the nodes of a field's list) on stack,
    but for the fields named in skip."""
    for field in n._fields:
        if field in skip:
            continue
        v = getattr(n, field, None)
        if type(v) is list:
            stack.extend(x for x in v if isinstance(x, _AST))
        elif isinstance(v, _AST):
            stack.append(v)


def _pair(target, value, bindings):
    t = type(target)
    if t is _Name:
        bindings.append((target.id, value))
    elif t in (_ast.Tuple, _ast.List):
        if type(value) in (_ast.Tuple, _ast.List) and len(value.elts) == len(target.elts) and not any(
                type(e) is _ast.Starred for e in target.elts):
            for tt, vv in zip(target.elts, value.elts):
                _pair(tt, vv, bindings)
        else:
            _unknown_targets(target, bindings)


def _unknown_targets(target, bindings):
    for n in _nodes(target, 1000):
        if type(n) is _Name:
            bindings.append((n.id, None))


def _join(base, part):
    if part.startswith("/"):
        return part
    return base.rstrip("/") + "/" + part if base else part


def _outside_workspace(path):
    """The absolute, normalised path when it is outside /mnt/data (the working directory), else None."""
    if "\0" in path:
        return None
    if path.startswith("~"):
        path = "/tmp" + path[1:]  # HOME is /tmp in the sandbox
    full = path if path.startswith("/") else WORKSPACE + "/" + path
    parts = []
    for p in full.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if parts:
                parts.pop()
            continue
        parts.append(p)
    norm = "/" + "/".join(parts)
    if norm == WORKSPACE or norm.startswith(WORKSPACE + "/"):
        return None
    return norm


_INSTALLERS = ("pip", "pip3", "conda", "mamba", "micromamba", "uv", "poetry")


def not_python_hint(line):
    """What to do instead, when a line the compiler refused is an IPython shell escape (``!ls``,
    ``!pip install x``) or magic (``%pip``, ``%matplotlib inline``, ``%%time``): they are not
    Python and a bare "invalid syntax" does not say so. None for any other line. Used for
    validate_code and dry runs here, and by the runner for a run's SyntaxError."""
    s = line.strip()
    if s.startswith("!") and not s.startswith("!="):
        kind = "an IPython shell escape (!command)"
    elif s.startswith("%") and s.lstrip("%")[:1].isalpha():
        kind = "an IPython magic (%name)"
    else:
        return None
    body = s.lstrip("!%").strip()
    words = body.split()
    shown = s if len(s) <= 60 else s[:57] + "..."
    if words and (words[0] in _INSTALLERS or words[1:3] == ["-m", "pip"]):
        return ("%s is %s, not Python: packages are not installed from code here; name them in the"
                " packages argument of run_python or create_session (e.g. packages=[\"%s\"])"
                % (shown, kind, next((w for w in words[1:] if w[:1].isalnum() and w not in
                                      ("install", "add", "pip")), "pandas")[:60]))
    if words and words[0] == "matplotlib":
        return ("%s is %s, not Python: remove it; matplotlib figures come back as images without it"
                % (shown, kind))
    if s.startswith("!"):
        return ("%s is %s, which pysandbox does not run: the code is plain Python; do it in Python"
                " (os.listdir, pathlib, shutil, or subprocess where the tier allows it)" % (shown, kind))
    return ("%s is %s, which pysandbox does not run: the code is plain Python; remove it or write"
            " the Python it stands for (timeit, time.perf_counter, os.chdir ...)" % (shown, kind))


def _syntax_problem(e, code, byte_offsets):
    line = e.lineno if isinstance(e.lineno, int) and e.lineno > 0 else None
    column = e.offset if isinstance(e.offset, int) and e.offset > 0 else None
    lines = code.split("\n")
    if byte_offsets and line is not None and column is not None:
        if line <= len(lines):
            column = len(lines[line - 1].encode("utf-8")[:column - 1].decode("utf-8", "ignore")) + 1
    hint = not_python_hint(lines[line - 1]) if line is not None and line <= len(lines) else None
    if hint is not None:
        return {"line": line, "column": 1, "message": hint[:500]}
    return {"line": line, "column": column, "message": str(e.msg)[:500]}


# Characters that make code read differently from how it runs ("Trojan Source", CVE-2021-42574):
# bidirectional embeddings, overrides and isolates, and the marks.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
                          "\u200e\u200f\u061c")


def _check_bidi(analysis, code):
    """A finding for the first line holding bidirectional control characters, counting them all."""
    count, first, column = 0, None, None
    for i, ch in enumerate(code):
        if ch in BIDI_CONTROLS:
            count += 1
            if first is None:
                first = code.count("\n", 0, i) + 1
                column = i - code.rfind("\n", 0, i)  # 1-based
    if count:
        analysis.add("bidi_control", HIGH, "%d bidirectional control character%s (U+202E and the"
                     " like): the code may read differently from how it runs (Trojan Source)"
                     % (count, "" if count == 1 else "s"), line=first, column=column)
        found = analysis.findings.get(("bidi_control", first))
        if found is not None and found["snippet"]:
            found["snippet"] = "".join("\\u%04x" % ord(c) if c in BIDI_CONTROLS else c
                                       for c in found["snippet"])


def analyze(code, budget=2.0):
    """The report on ``code`` (see the module's comment); never raises."""
    deadline = time.monotonic() + budget
    code = code.replace("\r\n", "\n").replace("\r", "\n")
    lines = code.count("\n") + (0 if code.endswith("\n") or not code else 1)
    report = {"valid": True, "syntax_errors": [], "risk_findings": [], "max_severity": None,
              "lines": lines, "functions": 0, "imports": 0}
    analysis = Analysis(code, deadline)
    tree = None
    # Valid means valid as a module: a top-level return, yield or await is refused (the runner
    # would still run a top-level await, as Jupyter does; code meant to be kept should not use it).
    flags = 0
    try:
        tree = compile(code, "<cell>", "exec", PYCF_ONLY_AST | flags, dont_inherit=True)
        compile(tree, "<cell>", "exec", flags, dont_inherit=True)  # what only the compiler refuses
    except SyntaxError as e:  # IndentationError and TabError too
        report["valid"] = False
        report["syntax_errors"].append(_syntax_problem(e, code, tree is not None))
    except (RecursionError, MemoryError) as e:
        report["valid"] = False
        report["syntax_errors"].append({"line": None, "column": None, "message":
                                        "too complex to compile (%s): the code is nested too deeply"
                                        % type(e).__name__})
        analysis.give_up("the code is too complex to analyse (%s)" % type(e).__name__)
        tree = None
    except (ValueError, OverflowError) as e:  # a NUL byte; numbers beyond C limits
        report["valid"] = False
        report["syntax_errors"].append({"line": None, "column": None, "message": str(e)[:500]})
    if tree is not None:
        analysis.run(tree)
    _check_bidi(analysis, code)
    findings = sorted(analysis.findings.values(),
                      key=lambda f: (-RANK[f["severity"]], f["line"] or 0, f["column"] or 0, f["rule"]))
    if len(findings) > MAX_FINDINGS:
        more = len(findings) - MAX_FINDINGS
        findings = findings[:MAX_FINDINGS]
        findings.append({"rule": "more_findings", "severity": LOW, "line": None, "column": None,
                         "snippet": None, "message": "%d more findings are not listed (the %d"
                         " above are the most severe)" % (more, MAX_FINDINGS)})
    report["risk_findings"] = findings
    report["max_severity"] = findings[0]["severity"] if findings else None
    report["functions"] = analysis.functions
    report["imports"] = analysis.imports
    return report


def analyze_safely(code, budget=2.0):
    """``analyze``, and whatever still goes wrong becomes a finding rather than an exception."""
    try:
        return analyze(code, budget)
    except BaseException as e:  # KeyboardInterrupt too: the answer must come
        failure = "%s: %s" % (type(e).__name__, e)
    try:
        compile(compile(code, "<cell>", "exec", PYCF_ONLY_AST, dont_inherit=True), "<cell>", "exec",
                dont_inherit=True)
        valid = True
    except BaseException:
        valid = False
    return {"valid": valid, "syntax_errors": [] if valid else [
                {"line": None, "column": None, "message": "the code could not be compiled"}],
            "max_severity": HIGH, "lines": 0, "functions": 0, "imports": 0,
            "risk_findings": [{"rule": "analysis_incomplete", "severity": HIGH,
                               "message": "the analysis failed (%s)" % failure[:300],
                               "line": None, "column": None, "snippet": None}]}


if __name__ == "__main__":  # python3 analyzer.py FILE: the report as JSON, for a person
    import json
    import sys

    with open(sys.argv[1], encoding="utf-8") as source:
        print(json.dumps(analyze(source.read()), indent=2))
