"""code_executor: run model-written Python in a separate, limited process. The code is hostile.

Layers, each enough to stop the common escapes on its own where it can:
1. An AST pre-check in the parent refuses imports other than math/numpy/scipy, names and
   attributes starting with "_" (no `().__class__.__bases__[0].__subclasses__()`), frame/code
   attributes, file and process helpers (`tofile`, `ctypeslib`, `os`, ...), the builtins that
   execute or open things, and string constants holding "__" (no getattr/format tricks).
2. The child (`python -I -S`, sys.path = the stdlib and the numpy/scipy site directory only,
   an empty environment, cwd a fresh temporary directory) runs the code with builtins lacking
   open/exec/eval/compile/globals/vars/setattr/input and an `__import__` that admits only
   math, numpy and scipy.
3. Before the code runs, the child installs a PEP 578 audit hook (irremovable): it refuses
   sockets, subprocesses, fork/exec/spawn/system, ctypes, signals to other processes, file
   writes, renames and deletes, resource-limit changes, and any file open or directory listing
   outside the Python installation (numpy/scipy may still lazily import their own modules).
4. A fresh network namespace (unshare CLONE_NEWNET, where the kernel allows it): no network even
   for code that got past the other layers.
5. Resource limits: RLIMIT_AS (memory), RLIMIT_CPU, RLIMIT_FSIZE=0, RLIMIT_NOFILE, RLIMIT_CORE=0,
   RLIMIT_NPROC=0 (not enforced for root, which is why layer 3 also refuses fork/spawn), and a
   wall-time limit after which the parent kills the child's whole process group.

Inputs go in as JSON on stdin and appear as the variable `inputs`; the code sets `result`,
returned as JSON (numpy arrays and scalars converted). `print` output is captured (capped).
Every failure is a structured {"error": {"code", "message"}}; nothing escapes as an exception.
"""
from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass

import numpy

ALLOWED_MODULES = frozenset({"math", "numpy", "scipy"})
DENIED_NAMES = frozenset({
    "open", "exec", "eval", "compile", "globals", "locals", "vars", "input", "breakpoint", "setattr",
    "delattr", "getattr", "help", "exit", "quit", "memoryview", "__import__", "__builtins__", "__loader__",
    "__spec__"})
# attributes that reach frames, code, modules with side effects, or the file system
DENIED_ATTRS = frozenset({
    "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "gi_frame", "gi_code", "cr_frame", "cr_code",
    "ag_frame", "ag_code", "tb_frame", "tb_next", "co_code", "func_globals", "mro",
    "os", "sys", "ctypes", "ctypeslib", "subprocess", "socket", "builtins", "importlib", "f2py", "testing",
    "distutils", "system", "popen", "spawn", "fork", "tofile", "fromfile", "memmap", "load", "save", "savez",
    "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromregex", "DataSource", "open_memmap",
    "loadmat", "savemat", "mmwrite", "mmread", "format", "format_map",
    "as_strided", "LowLevelCallable"})  # raw memory access would sidestep the audit hook
MAX_CODE_CHARS = 100_000


class CodeRefused(ValueError):
    """The code failed the static check; the message names the construct and its line."""


@dataclass(frozen=True)
class ExecutorLimits:
    timeout_s: float = 10.0        # wall time, then the process group is killed
    cpu_s: int = 5
    memory_mb: int = 1024          # address space (numpy + scipy need about 350 MB of it)
    max_output_bytes: int = 1_000_000
    max_stdout_chars: int = 10_000

    def __post_init__(self):
        if self.timeout_s <= 0 or self.cpu_s <= 0 or self.memory_mb < 400:
            raise ValueError(f"need timeout_s > 0, cpu_s > 0 and memory_mb >= 400 (numpy/scipy load), got {self}")


def check_code(code: str) -> ast.Module:
    """Parse and statically vet model code; raises CodeRefused saying what is not allowed."""
    if not isinstance(code, str):
        raise CodeRefused(f"code must be a string, got {type(code).__name__}")
    if len(code) > MAX_CODE_CHARS:
        raise CodeRefused(f"code is {len(code)} characters; the limit is {MAX_CODE_CHARS}")
    try:
        tree = ast.parse(code, "<model code>", "exec")
    except SyntaxError as e:
        raise CodeRefused(f"syntax error at line {e.lineno}: {e.msg}") from e
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.level:
                raise CodeRefused(f"{where}: relative imports are not allowed")
            for n in names:
                if n.split(".")[0] not in ALLOWED_MODULES or any(p.startswith("_") or p in DENIED_ATTRS for p in n.split(".")):
                    raise CodeRefused(f"{where}: import of {n!r} is not allowed; only {sorted(ALLOWED_MODULES)}")
            for a in node.names:
                if a.name.startswith("_") or a.name in DENIED_ATTRS:
                    raise CodeRefused(f"{where}: importing {a.name!r} is not allowed")
        elif isinstance(node, ast.Attribute) and (node.attr.startswith("_") or node.attr in DENIED_ATTRS):
            raise CodeRefused(f"{where}: attribute {node.attr!r} is not allowed")
        elif isinstance(node, ast.Name) and (node.id.startswith("__") or node.id in DENIED_NAMES):
            raise CodeRefused(f"{where}: name {node.id!r} is not allowed")
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and \
                ("__" in str(node.value) if isinstance(node.value, str) else b"__" in node.value):
            raise CodeRefused(f"{where}: string constants containing '__' are not allowed")
        elif isinstance(node, (ast.Global, ast.Nonlocal, ast.AsyncFunctionDef, ast.Await)):
            raise CodeRefused(f"{where}: {type(node).__name__} is not allowed")
    return tree


def _error(code: str, message: str, **extra) -> dict:
    return {"error": {"code": code, "message": message}, **extra}


def _allowed_roots() -> list[str]:
    import scipy

    stdlib = sysconfig.get_paths()["stdlib"]
    roots = {stdlib, sysconfig.get_paths()["platstdlib"], os.path.join(stdlib, "lib-dynload"),
             os.path.dirname(os.path.dirname(numpy.__file__)), os.path.dirname(os.path.dirname(scipy.__file__))}
    return sorted(os.path.realpath(r) for r in roots)


def run_code(code: str, inputs=None, limits: ExecutorLimits | None = None) -> dict:
    """Run `code` in a sandboxed child process; {"result": ..., "stdout": ..., "elapsed_s": ...}
    or {"error": {"code", "message"}}. Codes: REFUSED, INVALID_INPUT, TIMEOUT, CPU_LIMIT,
    MEMORY_LIMIT, RUNTIME_ERROR, NO_RESULT, NOT_SERIALIZABLE, OUTPUT_TOO_LARGE, CRASHED."""
    lim = limits or ExecutorLimits()
    try:
        check_code(code)
    except CodeRefused as e:
        return _error("REFUSED", str(e))
    try:
        payload = json.dumps({"code": code, "inputs": inputs, "roots": _allowed_roots(), "limits": {
            "cpu_s": lim.cpu_s, "memory_mb": lim.memory_mb, "max_stdout_chars": lim.max_stdout_chars,
            "max_output_bytes": lim.max_output_bytes}})
    except (TypeError, ValueError) as e:
        return _error("INVALID_INPUT", f"inputs must be JSON-serialisable: {e}")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sm_code_") as cwd:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=cwd, start_new_session=True,
                env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
        except OSError as e:
            return _error("CRASHED", f"could not start the sandbox process: {e}")
        try:
            out, err = proc.communicate(payload.encode(), timeout=lim.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return _error("TIMEOUT", f"the code ran longer than {lim.timeout_s} s of wall time and was killed")
        finally:
            _kill_group(proc)  # nothing may outlive the call
    elapsed = time.monotonic() - t0
    return _parse_child(proc.returncode, out, err, lim, elapsed)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _parse_child(rc, out: bytes, err: bytes, lim: ExecutorLimits, elapsed: float) -> dict:
    if rc is not None and rc < 0:
        sig = -rc
        if sig == signal.SIGXCPU or sig == signal.SIGKILL and elapsed < lim.timeout_s:
            return _error("CPU_LIMIT", f"the code used more than {lim.cpu_s} s of CPU time")
        return _error("CRASHED", f"the sandbox process died by signal {signal.Signals(sig).name}")
    if len(out) > lim.max_output_bytes:
        return _error("OUTPUT_TOO_LARGE", f"the result is {len(out)} bytes; the limit is {lim.max_output_bytes}")
    line = out.decode(errors="replace").strip().splitlines()[-1:] or [""]
    try:
        reply = json.loads(line[0])
    except json.JSONDecodeError:
        tail = err.decode(errors="replace")[-500:]
        if "MemoryError" in tail:
            return _error("MEMORY_LIMIT", f"the code exceeded the {lim.memory_mb} MB memory limit")
        return _error("CRASHED", f"the sandbox exited with code {rc} and no reply; stderr: {tail}")
    if not isinstance(reply, dict) or not ("result" in reply or "error" in reply):
        return _error("CRASHED", "the sandbox replied with an unexpected message")
    reply["elapsed_s"] = round(elapsed, 4)
    return reply


# The child: limits, audit hook, restricted builtins, run, reply. Runs with -I -S, so it sees
# no environment variables, user site or site-packages until it adds the allowed roots.
_CHILD = r'''
import sys, json, io
cfg = json.loads(sys.stdin.read())
sys.path[:] = cfg["roots"]
import resource, os
lim = cfg["limits"]
MB = 1024 * 1024
def _set(which, n):
    try:
        resource.setrlimit(which, (n, n))
    except (ValueError, OSError):
        pass
_set(resource.RLIMIT_CPU, int(lim["cpu_s"]))
_set(resource.RLIMIT_AS, int(lim["memory_mb"]) * MB)
_set(resource.RLIMIT_FSIZE, 0)
_set(resource.RLIMIT_CORE, 0)
_set(resource.RLIMIT_NPROC, 0)
import math, numpy, builtins
_set(resource.RLIMIT_NOFILE, 64)
def _no_network():
    # a fresh network namespace: no interfaces but a downed loopback, so even native code has no
    # network; needs root or user namespaces, else the audit hook alone refuses sockets
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.unshare(0x40000000) == 0 or libc.unshare(0x40000000 | 0x10000000) == 0
    except Exception:
        return False
NETNS = _no_network()
ROOTS = tuple(os.path.realpath(r) + os.sep for r in cfg["roots"])
ALLOWED = {"math", "numpy", "scipy"}
DENY_PREFIX = ("socket.", "subprocess.", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
               "os.forkpty", "os.kill", "os.killpg", "os.remove", "os.unlink", "os.rename", "os.rmdir",
               "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink", "os.truncate", "os.utime",
               "os.chdir", "os.chroot", "os.putenv", "os.unsetenv", "os.setuid", "os.setgid", "ctypes.",
               "resource.", "signal.", "mmap.", "shutil.", "urllib.", "http.", "ftplib.", "smtplib.",
               "webbrowser.", "sqlite3.", "fcntl.", "pty.", "code.__new__", "function.__new__",
               "builtins.input", "gc.", "sys.settrace", "sys.setprofile", "sys.addaudithook", "pickle.")
state = {"armed": False, "user_exec": 0}
def _inside(path):
    try:
        p = os.path.realpath(os.fsdecode(path))
    except Exception:
        return False
    return any((p + os.sep).startswith(r) for r in ROOTS)
def _hook(event, args):
    if not state["armed"]:
        return
    if event.startswith(DENY_PREFIX):
        raise PermissionError(f"sandbox: {event} is not allowed")
    if event == "open":
        path, mode, flags = args
        writing = (mode is not None and any(c in str(mode) for c in "wax+")) or (flags or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if writing or not isinstance(path, (str, bytes)) or not _inside(path):
            raise PermissionError(f"sandbox: opening {path!r} is not allowed")
    if event in ("os.listdir", "os.scandir") and not _inside(args[0] if args[0] is not None else "."):
        raise PermissionError(f"sandbox: listing {args[0]!r} is not allowed")
    if event in ("exec", "compile"):
        fn = getattr(args[0], "co_filename", None) if event == "exec" else args[1]
        if fn == "<model code>":
            state["user_exec"] += 1
            if state["user_exec"] > 1:
                raise PermissionError("sandbox: exec is not allowed")
        elif not (str(fn).startswith("<") or isinstance(fn, (str, bytes)) and _inside(fn)):  # library codegen: "<string>", "<unknown>"
            raise PermissionError(f"sandbox: {event} of {fn!r} is not allowed")
class _Capped(io.StringIO):
    def write(self, s):
        room = lim["max_stdout_chars"] - self.tell()
        return super().write(s[:max(room, 0)]) if room > 0 else 0
def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level or name.split(".")[0] not in ALLOWED:
        raise ImportError(f"sandbox: import of {name!r} is not allowed; only math, numpy, scipy")
    return __import__(name, globals, locals, fromlist, level)
safe = {k: v for k, v in vars(builtins).items() if k not in {
    "open", "exec", "eval", "compile", "globals", "locals", "vars", "input", "breakpoint", "setattr",
    "delattr", "getattr", "help", "exit", "quit", "memoryview", "__import__", "__loader__", "__spec__",
    "copyright", "credits", "license"}}
safe["__import__"] = _import
def _jsonable(x):
    if isinstance(x, numpy.ndarray):
        return x.tolist()
    if isinstance(x, numpy.generic):
        return x.item()
    if isinstance(x, (set, frozenset, tuple)):
        return list(x)
    raise TypeError(f"a {type(x).__name__} is not JSON-serialisable")
stdout = _Capped()
g = {"__builtins__": safe, "__name__": "__sandbox__", "inputs": cfg["inputs"], "math": math, "np": numpy, "numpy": numpy}
real_out = sys.stdout
code_obj = compile(cfg["code"], "<model code>", "exec")
sys.addaudithook(_hook)
state["armed"] = True
sys.stdout = sys.stderr = stdout
try:
    exec(code_obj, g)
    if "result" not in g:
        reply = {"error": {"code": "NO_RESULT", "message": "the code did not set a variable named result"}}
    else:
        try:
            reply = {"result": json.loads(json.dumps(g["result"], default=_jsonable, allow_nan=False))}
        except (TypeError, ValueError, RecursionError) as e:
            reply = {"error": {"code": "NOT_SERIALIZABLE", "message": f"result is not JSON-serialisable: {e}"}}
except MemoryError:
    reply = {"error": {"code": "MEMORY_LIMIT", "message": f"the code exceeded the {lim['memory_mb']} MB memory limit"}}
except (PermissionError, ImportError) as e:
    reply = {"error": {"code": "REFUSED", "message": f"{type(e).__name__}: {e}"}}
except BaseException as e:
    reply = {"error": {"code": "RUNTIME_ERROR", "message": f"{type(e).__name__}: {e}"[:2000]}}
reply["stdout"] = stdout.getvalue()
reply["network_namespace"] = NETNS
try:
    text = json.dumps(reply)
except (TypeError, ValueError) as e:
    text = json.dumps({"error": {"code": "NOT_SERIALIZABLE", "message": str(e)}})
if len(text) > lim["max_output_bytes"]:  # never make the parent read a huge reply
    text = json.dumps({"error": {"code": "OUTPUT_TOO_LARGE", "message": f"the reply is {len(text)} bytes; "
                                 f"the limit is {lim['max_output_bytes']}: return a summary"}})
real_out.write("\n" + text + "\n")
real_out.flush()
'''
