"""code_executor: run model-written Python in a sandbox the operating system enforces. The code is hostile.

1. A static check in the parent (`check_code`) refuses, with a friendly one-line reason, what a
   well-meaning model should not write: imports other than math/numpy/scipy, names and attributes
   starting with "_", frame/code attributes, file and process helpers, the builtins that execute
   or open things, string constants holding "__". It is a first filter, not the wall: Python
   offers too many detours (operator.attrgetter through a module's namespace, gc, frames ...).
2. The wall is the operating system (spatial_manip.tools.sandbox): a bubblewrap sandbox with
   fresh namespaces as nobody, a read-only root holding only /usr, Python, numpy and scipy, a
   private /tmp and /proc, no network, rlimits, a seccomp filter and a wall-time kill of the
   whole sandbox. Without bwrap, model code is not run at all (SANDBOX_UNAVAILABLE).

Inputs go in as JSON on stdin and appear as the variable `inputs`; the code sets `result`,
returned as JSON (numpy arrays and scalars converted). `print` output is captured (capped).
Every failure is a structured {"error": {"code", "message"}}; nothing escapes as an exception.
"""
from __future__ import annotations

import ast
import json
import signal
from dataclasses import dataclass

from spatial_manip.tools.sandbox import SandboxLimits, SandboxUnavailable, run_python

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
    "as_strided", "LowLevelCallable"})  # raw memory access: a crash, not an answer
MAX_CODE_CHARS = 100_000


class CodeRefused(ValueError):
    """The code failed the static check; the message names the construct and its line."""


@dataclass(frozen=True)
class ExecutorLimits:
    timeout_s: float = 10.0        # wall time, then the whole sandbox is killed
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


def run_code(code: str, inputs=None, limits: ExecutorLimits | None = None) -> dict:
    """Check `code` statically, then run it in the sandbox; {"result": ..., "stdout": ..., "elapsed_s": ...}
    or {"error": {"code", "message"}}. Codes: REFUSED, INVALID_INPUT, SANDBOX_UNAVAILABLE, TIMEOUT,
    CPU_LIMIT, MEMORY_LIMIT, RUNTIME_ERROR, NO_RESULT, NOT_SERIALIZABLE, OUTPUT_TOO_LARGE, CRASHED."""
    try:
        check_code(code)
    except CodeRefused as e:
        return _error("REFUSED", str(e))
    return run_in_sandbox(code, inputs, limits)


def run_in_sandbox(code: str, inputs=None, limits: ExecutorLimits | None = None) -> dict:
    """Run `code` in the sandbox without the static check (the sandbox alone must hold; the tests
    use this to attack it with everything Python allows). Same results as run_code."""
    lim = limits or ExecutorLimits()
    try:
        payload = json.dumps({"code": code, "inputs": inputs, "limits": {
            "memory_mb": lim.memory_mb, "max_stdout_chars": lim.max_stdout_chars,
            "max_output_bytes": lim.max_output_bytes}}, allow_nan=False)
    except (TypeError, ValueError) as e:
        return _error("INVALID_INPUT", f"inputs must be JSON-serialisable: {e}")
    # the runner caps its reply (captured prints included) at max_output_bytes; more is hostile
    sandbox_limits = SandboxLimits(timeout_s=lim.timeout_s, cpu_s=lim.cpu_s, memory_mb=lim.memory_mb,
                                   max_stdout_bytes=lim.max_output_bytes + 4096)
    try:
        run = run_python(_RUNNER, payload.encode(), sandbox_limits, packages=("numpy", "scipy"))
    except SandboxUnavailable as e:
        return _error("SANDBOX_UNAVAILABLE", str(e))
    return _parse_reply(run, lim)


def _parse_reply(run, lim: ExecutorLimits) -> dict:
    if run.timed_out:
        return _error("TIMEOUT", f"the code ran longer than {lim.timeout_s} s of wall time and was killed")
    if run.output_overflow:
        return _error("OUTPUT_TOO_LARGE", f"the code wrote more than {lim.max_output_bytes} bytes and was killed: "
                                          "return a summary")
    sig = run.signal
    if sig == signal.SIGXCPU or sig == signal.SIGKILL and run.elapsed_s >= lim.cpu_s:
        return _error("CPU_LIMIT", f"the code used more than {lim.cpu_s} s of CPU time and was killed")
    line = run.stdout.decode(errors="replace").strip().splitlines()[-1:] or [""]
    try:
        reply = json.loads(line[0])
    except json.JSONDecodeError:
        tail = run.stderr.decode(errors="replace")[-500:]
        if "MemoryError" in tail:
            return _error("MEMORY_LIMIT", f"the code exceeded the {lim.memory_mb} MB memory limit")
        how = f"died by signal {signal.Signals(sig).name}" if sig else f"exited with code {run.returncode}"
        return _error("CRASHED", f"the sandboxed code {how} without a reply; stderr: {tail}")
    if not isinstance(reply, dict) or not ("result" in reply or "error" in reply):
        return _error("CRASHED", "the sandbox replied with an unexpected message")
    reply["elapsed_s"] = round(run.elapsed_s, 4)
    return reply


# Runs inside the sandbox after the rlimits are set: read the inputs, run the code, reply with
# one JSON line on the real stdout (print output is captured and capped), and exit at once: a
# thread the code left running must not hold the call open.
_RUNNER = r'''
import io, json, math, os, sys
import numpy
cfg = json.loads(sys.stdin.buffer.read())
lim = cfg["limits"]
class _Capped(io.StringIO):
    def write(self, s):
        room = lim["max_stdout_chars"] - self.tell()
        return super().write(s[:room]) if room > 0 else 0
def _jsonable(x):
    if isinstance(x, numpy.ndarray):
        return x.tolist()
    if isinstance(x, numpy.generic):
        return x.item()
    if isinstance(x, (set, frozenset, tuple)):
        return list(x)
    raise TypeError(f"a {type(x).__name__} is not JSON-serialisable")
captured = _Capped()
g = {"__name__": "__sandbox__", "inputs": cfg["inputs"], "math": math, "np": numpy, "numpy": numpy}
real_out = sys.stdout
sys.stdout = sys.stderr = captured
try:
    exec(compile(cfg["code"], "<model code>", "exec"), g)
    if "result" not in g:
        reply = {"error": {"code": "NO_RESULT", "message": "the code did not set a variable named result"}}
    else:
        try:
            reply = {"result": json.loads(json.dumps(g["result"], default=_jsonable, allow_nan=False))}
        except (TypeError, ValueError, RecursionError) as e:
            reply = {"error": {"code": "NOT_SERIALIZABLE", "message": f"result is not JSON-serialisable: {e}"}}
except MemoryError:
    reply = {"error": {"code": "MEMORY_LIMIT", "message": f"the code exceeded the {lim['memory_mb']} MB memory limit"}}
except BaseException as e:
    reply = {"error": {"code": "RUNTIME_ERROR", "message": f"{type(e).__name__}: {e}"[:2000]}}
reply["stdout"] = captured.getvalue()
try:
    text = json.dumps(reply)
except (TypeError, ValueError) as e:
    text = json.dumps({"error": {"code": "NOT_SERIALIZABLE", "message": str(e)}})
if len(text) > lim["max_output_bytes"]:  # never make the parent read a huge reply
    text = json.dumps({"error": {"code": "OUTPUT_TOO_LARGE", "message": f"the reply is {len(text)} bytes; "
                                 f"the limit is {lim['max_output_bytes']}: return a summary"}})
real_out.write("\n" + text + "\n")
real_out.flush()
os._exit(0)
'''
