"""The seccomp profile of a sandbox (and of a build box): what Docker's default profile
refuses, plus io_uring.

Passing any profile replaces Docker's default one, so this one keeps its intent (no new
namespaces, no mounts, no kernel keyring, modules, BPF, clock or reboot calls) and adds
io_uring, whose submissions bypass per-syscall filtering and have been a steady source of
kernel exploits. Everything not named is allowed; refused calls fail with EPERM.
"""

from __future__ import annotations

import json
from functools import cache

_EPERM = 1
_ENOSYS = 38
_EOPNOTSUPP = 95

REFUSED = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "acct",
    "add_key",
    "bpf",
    "clock_adjtime",
    "clock_settime",
    "create_module",
    "delete_module",
    "finit_module",
    "fsconfig",
    "fsmount",
    "fsopen",
    "fspick",
    "get_kernel_syms",
    "init_module",
    "ioperm",
    "iopl",
    "kexec_file_load",
    "kexec_load",
    "keyctl",
    "lookup_dcookie",
    "mbind",
    "mount",
    "mount_setattr",
    "move_mount",
    "move_pages",
    "name_to_handle_at",
    "nfsservctl",
    "open_by_handle_at",
    "open_tree",
    "perf_event_open",
    "pivot_root",
    "query_module",
    "quotactl",
    "reboot",
    "request_key",
    "set_mempolicy",
    "setns",
    "settimeofday",
    "stime",
    "swapoff",
    "swapon",
    "sysfs",
    "syslog",
    "umount",
    "umount2",
    "unshare",
    "uselib",
    "userfaultfd",
    "ustat",
    "vm86",
    "vm86old",
)

# clone flags that make a new namespace (CLONE_NEWNS ... CLONE_NEWNET, CLONE_NEWCGROUP)
NAMESPACE_FLAGS = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)


@cache
def seccomp_profile() -> str:
    """The profile as the JSON text Docker's `seccomp=` security option takes."""
    return json.dumps(_profile([]))


@cache
def build_seccomp_profile() -> str:
    """A build box's profile: a sandbox's, and `fallocate` unsupported.

    A build box's layer lies on the engine's disk, bounded by a watch that asks what it
    holds (overlay2 on ext4 cannot size it): a file allocated in one call took its whole
    size at once, however large, before any ask. Told the file system does not support it,
    a tool falls back to writing (glibc's `posix_fallocate`, Go's linker) or fails plainly,
    and a writer is stopped by the watch (past the limit by what it wrote between two
    asks)."""
    return json.dumps(
        _profile([{"names": ["fallocate"], "action": "SCMP_ACT_ERRNO", "errnoRet": _EOPNOTSUPP}])
    )


def _profile(more: list[dict[str, object]]) -> dict[str, object]:
    syscalls: list[dict[str, object]] = [
        {"names": list(REFUSED), "action": "SCMP_ACT_ERRNO", "errnoRet": _EPERM},
        # clone3 passes its flags in memory, out of seccomp's sight: report it missing so that
        # libc falls back to clone, whose flags are checked below
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": _ENOSYS},
    ]
    for flag in NAMESPACE_FLAGS:
        syscalls.append(
            {
                "names": ["clone"],
                "action": "SCMP_ACT_ERRNO",
                "errnoRet": _EPERM,
                "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}],
            }
        )
    syscalls += more
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": [
            "SCMP_ARCH_X86_64",
            "SCMP_ARCH_X86",
            "SCMP_ARCH_X32",
            "SCMP_ARCH_AARCH64",
            "SCMP_ARCH_ARM",
        ],
        "syscalls": syscalls,
    }
