"""A seccomp filter for the code sandbox, assembled as classic BPF for bubblewrap's --seccomp.

Why: bubblewrap's namespaces already hide the host, but when the caller is root the sandbox's
user maps to root outside, for which the kernel does not enforce RLIMIT_NPROC. This filter makes
"no new processes" hold anyway, and closes kernel interfaces model code has no use for:
- fork, vfork, and clone without CLONE_THREAD fail with EPERM (threads still work: numpy and
  scipy may start them); clone3 fails with ENOSYS, so the C library falls back to clone;
- sockets, ptrace and other processes' memory, mounts and namespaces, keyrings, bpf,
  perf_event_open, userfaultfd, io_uring and module loading fail with EPERM.
Any other architecture than the one the filter was built for (e.g. x32 or 32-bit calls on
x86_64) kills the process.
"""
from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR_OFFSET, _ARCH_OFFSET, _ARG0_LOW_OFFSET = 0, 4, 16  # args[0]'s low word (little-endian)
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_RET_ALLOW, _RET_KILL_PROCESS, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_X32_SYSCALL_BIT = 0x40000000
_CLONE_THREAD = 0x00010000

# machine -> (AUDIT_ARCH_*, syscall numbers); numbers from the kernel's unistd headers
_ARCHES = {
    "x86_64": (0xC000003E, {
        "fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "socket": 41, "ptrace": 101,
        "process_vm_readv": 310, "process_vm_writev": 311, "mount": 165, "umount2": 166,
        "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308, "add_key": 248,
        "request_key": 249, "keyctl": 250, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
        "move_mount": 429, "fsopen": 430, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "init_module": 175, "finit_module": 313, "kexec_load": 246}),
    "aarch64": (0xC00000B7, {  # the generic table: no fork or vfork system calls
        "clone": 220, "clone3": 435, "socket": 198, "ptrace": 117, "process_vm_readv": 270,
        "process_vm_writev": 271, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
        "unshare": 97, "setns": 268, "add_key": 217, "request_key": 218, "keyctl": 219, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsmount": 432,
        "fspick": 433, "mount_setattr": 442, "init_module": 105, "finit_module": 273, "kexec_load": 104}),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The filter as bytes of struct sock_filter, or None on an architecture it does not know
    (the namespaces and rlimits still hold there; only this extra layer is missing)."""
    machine = machine or platform.machine()
    if machine not in _ARCHES:
        return None
    audit_arch, numbers = _ARCHES[machine]
    denied = [nr for name, nr in numbers.items() if name not in ("clone", "clone3")]
    deny_eperm = _RET_ERRNO | errno.EPERM
    # layout: header, one jump per denied call (to DENY), clone and clone3 checks, ALLOW, DENY
    prog = [_insn(_LD_W_ABS, _ARCH_OFFSET),
            _insn(_JEQ_K, audit_arch, jt=1),
            _insn(_RET_K, _RET_KILL_PROCESS),
            _insn(_LD_W_ABS, _NR_OFFSET)]
    tail = 7  # instructions after the denied list: clone3 (2), clone (1), load, jset, ALLOW, DENY
    if machine == "x86_64":
        prog.append(_insn(_JGE_K, _X32_SYSCALL_BIT, jt=len(denied) + tail - 1))
    for i, nr in enumerate(denied):
        prog.append(_insn(_JEQ_K, nr, jt=len(denied) - i - 1 + tail - 1))
    prog += [_insn(_JEQ_K, numbers["clone3"], jf=1),
             _insn(_RET_K, _RET_ERRNO | errno.ENOSYS),
             _insn(_JEQ_K, numbers["clone"], jf=2),            # not clone: allow
             _insn(_LD_W_ABS, _ARG0_LOW_OFFSET),
             _insn(_JSET_K, _CLONE_THREAD, jf=1),              # a thread: allow, else deny
             _insn(_RET_K, _RET_ALLOW),
             _insn(_RET_K, deny_eperm)]
    return b"".join(prog)
