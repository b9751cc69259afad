# Loads an OCI seccomp filter (runtime-spec `linux.seccomp`, as pod-seccomp.ts builds it) the way runc does, then
# execs the container's command in place: `python3 -I -c "$(cat seccomp-exec.py)" FILTER_JSON COMMAND ARGS...`.
# It runs last, after setpriv, as runc applies the filter last; the filter holds across exec. libseccomp sets
# no_new_privs as it loads a filter without CAP_SYS_ADMIN, which the Deployment (allowPrivilegeEscalation: false)
# sets anyway.
import json
import os
import sys

import seccomp

OPS = {
    "SCMP_CMP_EQ": seccomp.EQ,
    "SCMP_CMP_NE": seccomp.NE,
    "SCMP_CMP_LT": seccomp.LT,
    "SCMP_CMP_LE": seccomp.LE,
    "SCMP_CMP_GT": seccomp.GT,
    "SCMP_CMP_GE": seccomp.GE,
    "SCMP_CMP_MASKED_EQ": seccomp.MASKED_EQ,
}


def action(name, errno):
    if name == "SCMP_ACT_ALLOW":
        return seccomp.ALLOW
    if name == "SCMP_ACT_ERRNO":
        return seccomp.ERRNO(1 if errno is None else errno)  # runc's default errno is EPERM
    if name in ("SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD"):
        return seccomp.KILL
    if name == "SCMP_ACT_KILL_PROCESS":
        return seccomp.KILL_PROCESS
    if name == "SCMP_ACT_LOG":
        return seccomp.LOG
    raise SystemExit(f"seccomp-exec: action {name} is not supported")


spec = json.loads(sys.argv[1])
rules = seccomp.SyscallFilter(defaction=action(spec["defaultAction"], spec.get("defaultErrnoRet")))
for arch in spec.get("architectures", []):
    arch = getattr(seccomp.Arch, arch.removeprefix("SCMP_ARCH_"))
    if not rules.exist_arch(arch):  # the native one is there already
        rules.add_arch(arch)
for call in spec["syscalls"]:
    args = [seccomp.Arg(a["index"], OPS[a["op"]], a["value"], a.get("valueTwo", 0)) for a in call.get("args") or []]
    for name in call["names"]:
        # As runc: a name this libseccomp does not know is skipped (the default action answers it).
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) == -1:
            continue
        rules.add_rule(action(call["action"], call.get("errnoRet")), name, *args)
rules.load()
os.execv(sys.argv[2], sys.argv[2:])
