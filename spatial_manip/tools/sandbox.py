"""sandbox: run a Python script in a bubblewrap sandbox the operating system enforces.

The script sees a read-only root holding only /usr, the Python installation and the packages it
may import, a private tmpfs /tmp, its own read-only /proc and a minimal /dev; it runs as nobody with
no capabilities (bounding set empty, no_new_privs), in fresh user, mount, PID, IPC, UTS, cgroup and
network namespaces, in its own session, under rlimits on CPU time, address space, processes, open
files and file size, and a seccomp filter (sandbox_seccomp) that refuses new processes and kernel
interfaces it has no use for.
Data goes in on stdin and comes back on stdout, both bounded. The parent kills the whole sandbox
(bwrap's process group; the PID namespace dies with it) at the wall-time limit, when the output
grows past its bound, and always before returning, so nothing outlives a call.

There is no weaker fallback: without a working bwrap, `check_sandbox` raises SandboxUnavailable.

bwrap maps the sandbox's nobody to the uid bwrap runs as. A root caller starts bwrap as nobody when
nobody can reach the interpreter and packages (`_nobody_can_run`); otherwise (a Python under /root,
as in the project's container) the sandbox's nobody is root outside its namespace: hence the empty
capability sets, the read-only /proc and everything else read-only, and the seccomp filter's fork
ban (the kernel does not apply RLIMIT_NPROC to root). Running the stack as an ordinary user makes
the sandbox's processes that user's.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from spatial_manip.tools.sandbox_seccomp import seccomp_program

NOBODY = 65534
# shown in the host's process list, so an operator (and the tests) can find a sandbox's processes
LABEL_PREFIX = "spatial-manip-sandbox:"
_INSTALL_HINT = "install the 'bubblewrap' package (apt-get install bubblewrap; scripts/setup.sh does)"
_USERNS_HINT = ("allow user namespaces (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces>0; "
                "Ubuntu 24.04 also needs an AppArmor profile permitting bwrap; in Docker, a seccomp profile "
                "permitting clone/unshare)")


class SandboxUnavailable(RuntimeError):
    """bwrap is missing or cannot create its namespaces here; the message says what to install."""


@dataclass(frozen=True)
class SandboxLimits:
    timeout_s: float               # wall time, then the whole sandbox is killed
    cpu_s: int                     # RLIMIT_CPU: SIGXCPU at cpu_s, SIGKILL one second later
    memory_mb: int                 # RLIMIT_AS
    max_stdout_bytes: int          # more, and the sandbox is killed
    max_stderr_bytes: int = 20_000  # kept; the rest is read and dropped
    # RLIMIT_NPROC counts the sandbox's tasks, threads included, where the caller is not root (the
    # kernel exempts root); the seccomp filter refuses new processes either way
    max_processes: int = 16
    max_open_files: int = 64       # RLIMIT_NOFILE
    max_file_bytes: int = 0        # RLIMIT_FSIZE: the script needs no files
    tmp_mb: int = 16               # size of the private /tmp


@dataclass(frozen=True)
class SandboxRun:
    returncode: int | None         # bwrap's: the script's exit status, or 128 + signal number
    stdout: bytes
    stderr: bytes
    timed_out: bool
    output_overflow: bool
    elapsed_s: float

    @property
    def signal(self) -> int | None:
        """The signal that ended the script (bwrap reports it as 128 + signal), else None."""
        rc = self.returncode
        return rc - 128 if rc is not None and 128 < rc < 128 + 65 else None


# Sets the rlimits before anything else runs in the sandboxed interpreter; refusing to go on if
# one cannot be set. Python ignores SIGXFSZ, so a write past RLIMIT_FSIZE fails with EFBIG.
_PREAMBLE = """\
import resource as _r, sys as _s
for _k, _n, _h in {limits!r}:
    _r.setrlimit(getattr(_r, _k), (_n, _h))
_s.path[:] = [p for p in _s.path if p] + {site_dirs!r}
del _r, _s, _k, _n, _h
"""


def run_python(script: str, stdin: bytes, limits: SandboxLimits, packages: tuple[str, ...] = ()) -> SandboxRun:
    """Run `script` with `python -I -S` inside the sandbox, `stdin` on its standard input.
    `packages` are the importable top-level packages bound in read-only (plus their .libs)."""
    check_sandbox()
    binds, site_dirs = _package_binds(tuple(packages))
    rlimits = [("RLIMIT_CPU", int(limits.cpu_s), int(limits.cpu_s) + 1),
               ("RLIMIT_AS", limits.memory_mb << 20, limits.memory_mb << 20),
               ("RLIMIT_NPROC", limits.max_processes, limits.max_processes),
               ("RLIMIT_NOFILE", limits.max_open_files, limits.max_open_files),
               ("RLIMIT_FSIZE", limits.max_file_bytes, limits.max_file_bytes),
               ("RLIMIT_CORE", 0, 0)]
    code = _PREAMBLE.format(limits=rlimits, site_dirs=list(site_dirs)) + script
    return _run([*_bwrap_argv(binds, limits.tmp_mb), _python(), "-I", "-S", "-B", "-c", code,
                 f"{LABEL_PREFIX}{os.getpid()}"], stdin, limits, as_nobody=_nobody_can_run(tuple(packages)))


@functools.lru_cache(maxsize=1)
def _probe_ok() -> bool:
    """One real sandbox start per process; an exception (SandboxUnavailable) is not cached."""
    if _bwrap() is None:
        raise SandboxUnavailable(f"the code sandbox needs bubblewrap (bwrap), which is not on PATH: {_INSTALL_HINT}")
    limits = SandboxLimits(timeout_s=20.0, cpu_s=10, memory_mb=256, max_stdout_bytes=100)
    run = _run([*_bwrap_argv((), limits.tmp_mb), _python(), "-I", "-S", "-c", "print('ok')"], b"", limits)
    if run.returncode != 0 or run.stdout.strip() != b"ok":
        why = run.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit status {run.returncode}"]
        hint = _USERNS_HINT if "namespace" in why[0] or "ermission" in why[0] else _INSTALL_HINT
        raise SandboxUnavailable(f"the code sandbox (bwrap) cannot start here: {why[0]}; model code is not run "
                                 f"without it: {hint}")
    return True


@functools.lru_cache(maxsize=8)
def _nobody_can_run(packages: tuple[str, ...]) -> bool:
    """Whether a root caller can start bwrap itself as nobody, so that the sandbox's processes are
    nobody's outside their namespace too, not root's: nobody must reach the interpreter and the
    packages (a Python under /root cannot) and the kernel must give nobody user namespaces. Decided
    by one trial start importing the packages; when it fails, bwrap runs as the caller."""
    if os.geteuid() != 0:
        return False
    binds, site_dirs = _package_binds(packages)
    limits = SandboxLimits(timeout_s=30.0, cpu_s=20, memory_mb=1024, max_stdout_bytes=100)
    script = f"import sys\nsys.path += {list(site_dirs)!r}\n" + "".join(f"import {p}\n" for p in packages) + "print('ok')"
    run = _run([*_bwrap_argv(binds, limits.tmp_mb), _python(), "-I", "-S", "-c", script], b"", limits, as_nobody=True)
    return run.returncode == 0 and run.stdout.strip() == b"ok"


def check_sandbox() -> None:
    """Raise SandboxUnavailable unless bwrap can start a sandbox here (checked once per process)."""
    _probe_ok()


def _run(argv: list[str], stdin: bytes, limits: SandboxLimits, as_nobody: bool = False) -> SandboxRun:
    bpf = seccomp_program()
    fds = []
    if bpf is not None:
        fds.append(_memfd("sm-sandbox-seccomp", bpf))
        argv = [argv[0], "--seccomp", str(fds[0]), *argv[1:]]
    stdin_fd = _memfd("sm-sandbox-stdin", stdin)  # a file, not a pipe: no deadlock on large inputs
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=stdin_fd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                pass_fds=fds, start_new_session=True, env={"PATH": "/usr/bin:/bin"},
                                **({"user": NOBODY, "group": NOBODY, "extra_groups": []} if as_nobody else {}))
    except OSError as e:
        raise SandboxUnavailable(f"could not start bwrap ({argv[0]}): {e}: {_INSTALL_HINT}") from e
    finally:
        for fd in (*fds, stdin_fd):
            os.close(fd)
    try:
        out, err, timed_out, overflow = _collect(proc, t0 + limits.timeout_s, limits)
    finally:
        _kill_sandbox(proc)
    return SandboxRun(proc.returncode, out, err, timed_out, overflow, time.monotonic() - t0)


def _collect(proc: subprocess.Popen, deadline: float, limits: SandboxLimits):
    """Read stdout and stderr until both close and the process exits, the deadline passes, or
    stdout outgrows its bound; stderr beyond its bound is read and dropped."""
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    caps = {proc.stdout: limits.max_stdout_bytes, proc.stderr: limits.max_stderr_bytes}
    with selectors.DefaultSelector() as sel:
        for f in bufs:
            sel.register(f, selectors.EVENT_READ)
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bytes(bufs[proc.stdout]), bytes(bufs[proc.stderr]), True, False
            for key, _ in sel.select(remaining):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = bufs[key.fileobj]
                buf += chunk[:max(0, caps[key.fileobj] + 1 - len(buf))]
                if key.fileobj is proc.stdout and len(buf) > caps[proc.stdout]:
                    return bytes(buf), bytes(bufs[proc.stderr]), False, True
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return bytes(bufs[proc.stdout]), bytes(bufs[proc.stderr]), True, False
    return bytes(bufs[proc.stdout]), bytes(bufs[proc.stderr]), False, False


def _kill_sandbox(proc: subprocess.Popen) -> None:
    """SIGKILL bwrap's process group; its PID namespace's init dies with it (--die-with-parent),
    and the kernel then kills everything left in the namespace."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    for f in (proc.stdout, proc.stderr):
        f.close()


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)  # Popen hands it to bwrap alone (pass_fds, stdin)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@functools.lru_cache(maxsize=1)
def _bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def _bwrap_help() -> str:
    try:
        return subprocess.run([_bwrap(), "--help"], check=False, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _python() -> str:
    return os.path.realpath(sys.executable)


def _bwrap_argv(package_binds, tmp_mb: int) -> list[str]:
    argv = [_bwrap(), "--unshare-all", "--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if "--disable-userns" in _bwrap_help():  # bwrap >= 0.8; the seccomp filter refuses unshare anyway
        argv += ["--disable-userns"]
    # the private /tmp first: binds are mounted in order, so a Python or package that lives under
    # /tmp (a checkout in /tmp/...) is bound on top of it instead of hidden by it
    if "--size" in _bwrap_help():
        argv += ["--size", str(tmp_mb << 20)]
    argv += ["--tmpfs", "/tmp"]
    argv += _root_binds()
    for path in package_binds:
        argv += ["--ro-bind", path, path]
    # /proc read-only: a root caller's sandbox user is root outside the namespace, and the kernel lets
    # root's uid write sysctls such as /proc/sys/kernel/core_pattern without any capability
    argv += ["--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev", "--chdir", "/tmp",
             "--clearenv",
             "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8"]
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # one CPU-time budget
        argv += ["--setenv", var, "1"]
    return argv


@functools.lru_cache(maxsize=1)
def _root_binds() -> tuple[str, ...]:
    """/usr and the top-level library links, the dynamic loader's cache, and the Python prefix."""
    argv = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    if os.path.isfile("/etc/ld.so.cache"):
        argv += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    prefix = os.path.realpath(sys.base_prefix)
    if not _under(prefix, "/usr"):
        argv += ["--ro-bind", prefix, prefix]
    if not (_under(_python(), prefix) or _under(_python(), "/usr")):
        raise SandboxUnavailable(f"the Python interpreter {_python()} lies outside its prefix {prefix} and /usr; "
                                 "run the stack from a regular Python installation or virtual environment")
    return tuple(argv)


@functools.lru_cache(maxsize=8)
def _package_binds(packages: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(directories to bind, site directories to put on sys.path) for the given packages."""
    binds, sites = [], []
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise SandboxUnavailable(f"package {name!r} for the code sandbox is not installed")
        pkg = os.path.realpath(next(iter(spec.submodule_search_locations)))
        for path in (pkg, pkg + ".libs"):  # wheels keep their bundled shared libraries in <pkg>.libs
            if os.path.isdir(path) and not _under(path, "/usr") and path not in binds:
                binds.append(path)
        if os.path.dirname(pkg) not in sites:
            sites.append(os.path.dirname(pkg))
    return tuple(binds), tuple(sites)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
