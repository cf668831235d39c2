"""What a sandboxed process sees of the host: the policy, and the bubblewrap command line of it.

Pure: :func:`bwrap_argv` turns a :class:`SandboxPolicy` into an argument list and touches
nothing (the host facts it needs, :func:`host_layout` and :func:`identity_for`, are separate).

The sandbox (Debian's ``bwrap``, unprivileged user namespaces):

- **who**: one unprivileged host uid. As root, the launcher first drops to a dedicated uid
  (:data:`SANDBOX_UID_BASE` + a slot, e.g. the display number: no account has it, no other env
  shares it) with ``setpriv`` (no supplementary groups, no capabilities, ``no_new_privs``), then
  bwrap makes a user namespace in which that uid appears as :data:`INNER_UID` (``user``). As
  another user, the user's own uid. Never host root: ``bwrap --uid`` alone inside a user namespace
  would still be root on the host.
- **namespaces**: user, pid (the sandbox's processes die with it, daemons included), ipc, uts,
  cgroup, and network unless ``network=True`` (then the host's network namespace, loopback
  included); no nested user namespaces (``--disable-userns``).
- **files**: the host's ``/usr`` read-only (with the ``/bin``, ``/lib``... links or directories of
  the host's layout), the ``/etc`` entries of :data:`ETC_ENTRIES` read-only (never ``shadow``,
  ``sudoers``, ``ssh``...; :data:`NETWORK_ETC_ENTRIES` only with network), synthesized
  ``/etc/passwd``, ``group`` and ``hosts``, fresh ``/proc`` and ``/dev``, empty tmpfs on ``/tmp``,
  ``/var/tmp``, ``/run``, ``/dev/shm``, the host's font cache read-only, and the policy's own :class:`Bind` list (the env's home,
  its X socket, ...). Nothing else of the host: not ``/root``, not ``/home``, not
  ``$HUD_GYM_HOME``, not the project.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "ETC_ENTRIES",
    "INNER_GID",
    "INNER_UID",
    "INNER_USER",
    "NETWORK_ETC_ENTRIES",
    "SANDBOX_UID_BASE",
    "SYSTEM_DIRS",
    "Bind",
    "Identity",
    "SandboxPolicy",
    "bwrap_argv",
    "etc_files",
    "host_layout",
    "identity_for",
]

SANDBOX_UID_BASE = 0x6875_6400
"""Host uids of sandboxes started by root: this plus a slot (1752523776 + n; no account uses them)."""
INNER_UID = 1000
INNER_GID = 1000
INNER_USER = "user"
"""The uid, gid and name a sandboxed process has inside its user namespace."""

SYSTEM_DIRS: tuple[str, ...] = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Top-level system directories: links into ``/usr`` on merged-usr hosts, else bound read-only."""

ETC_ENTRIES: tuple[str, ...] = (
    "alternatives",
    "bash.bashrc",
    "bash_completion",
    "bash_completion.d",
    "environment",
    "fonts",
    "gtk-2.0",
    "gtk-3.0",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "magic",
    "mime.types",
    "nsswitch.conf",
    "profile",
    "profile.d",
    "shells",
    "terminfo",
    "timezone",
    "X11",
    "xdg",
    # The real desktop apps' system settings (docker/ubuntu/packages.txt): LibreOffice's
    # sofficerc and registry, Chromium's wrapper settings and policies, GIMP's gimprc, ...
    "chromium",
    "chromium.d",
    "gimp",
    "libreoffice",
    "mailcap",
    "papersize",
    "thunderbird",
)
"""``/etc`` entries the desktop's programs read (fonts, app defaults, the shell's profile, the
dynamic linker's cache, the desktop apps' settings), bound read-only when the host has them."""

NETWORK_ETC_ENTRIES: tuple[str, ...] = (
    "ca-certificates",
    "ca-certificates.conf",
    "gai.conf",
    "host.conf",
    "hosts",
    "resolv.conf",
    "ssl",
)
"""``/etc`` entries bound only when the sandbox has the network (name resolution, TLS roots)."""

TMPFS_DIRS: tuple[str, ...] = ("/tmp", "/var/tmp", "/run", "/dev/shm")

CACHE_DIRS: tuple[str, ...] = ("/var/cache/fontconfig",)
"""Host caches bound read-only (without fontconfig's, each app's first start rescans every font)."""


@dataclass(frozen=True)
class Identity:
    """The host uid/gid a sandbox runs as; ``switch``: the launcher (root) must drop to them first."""

    uid: int
    gid: int
    switch: bool = False


def identity_for(euid: int, egid: int, slot: int) -> Identity:
    """The sandbox identity of a process with ``euid``/``egid``: root gets the dedicated uid of
    ``slot`` (see the module docstring), anyone else keeps their own."""
    if euid == 0:
        uid = SANDBOX_UID_BASE + slot
        return Identity(uid, uid, switch=True)
    return Identity(euid, egid, switch=False)


@dataclass(frozen=True)
class Bind:
    """A host path the sandbox sees at ``dest`` (default: the same path); writable or read-only."""

    source: str
    dest: str | None = None
    writable: bool = False


@dataclass(frozen=True)
class SandboxPolicy:
    """Everything :func:`bwrap_argv` needs; see the module docstring.

    Attributes:
        identity: who the sandbox runs as on the host.
        binds: the host paths it sees, in order (after the tmpfs mounts, so they may lie in ``/tmp``).
        etc: synthesized ``/etc`` files: name -> host file holding the content (``passwd``, ...).
        layout: the host's :data:`SYSTEM_DIRS`: path -> ``"link:<target>"`` or ``"dir"``.
        network: share the host's network namespace (else an empty one: loopback only).
        hostname: the sandbox's host name.
        chdir: the working directory of the command.
        as_pid_1: the command is the sandbox's pid 1 (it must reap orphans; bwrap's own init
            otherwise, which loses the CPU time of what it reaps).
    """

    identity: Identity
    binds: tuple[Bind, ...] = ()
    etc: Mapping[str, str] = field(default_factory=dict)
    layout: Mapping[str, str] = field(default_factory=dict)
    network: bool = False
    hostname: str = "hud-gym"
    chdir: str | None = None
    as_pid_1: bool = False


def bwrap_argv(
    policy: SandboxPolicy, command: Sequence[str], *, bwrap: str = "bwrap", setpriv: str = "setpriv"
) -> list[str]:
    """The command line that runs ``command`` inside the sandbox ``policy`` describes."""
    ident = policy.identity
    argv: list[str] = []
    if ident.switch:
        argv += [
            setpriv,
            f"--reuid={ident.uid}",
            f"--regid={ident.gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--no-new-privs",
            "--",
        ]
    argv += [bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not policy.network:
        argv.append("--unshare-net")
    argv += [
        "--uid",
        str(INNER_UID),
        "--gid",
        str(INNER_GID),
        "--hostname",
        policy.hostname,
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
    ]
    if policy.as_pid_1:
        argv.append("--as-pid-1")
    argv += ["--ro-bind", "/usr", "/usr"]
    for path, kind in sorted(policy.layout.items()):
        if kind.startswith("link:"):
            argv += ["--symlink", kind[len("link:") :], path]
        elif kind == "dir":
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    for path in TMPFS_DIRS:
        argv += ["--tmpfs", path]
    entries = ETC_ENTRIES + (NETWORK_ETC_ENTRIES if policy.network else ())
    for name in entries:
        if name not in policy.etc:
            argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for name, source in sorted(policy.etc.items()):
        argv += ["--ro-bind", source, f"/etc/{name}"]
    for path in CACHE_DIRS:
        argv += ["--ro-bind-try", path, path]
    for bind in policy.binds:
        argv += ["--bind" if bind.writable else "--ro-bind", bind.source, bind.dest or bind.source]
    if policy.chdir is not None:
        argv += ["--chdir", policy.chdir]
    return [*argv, "--", *command]


# ----------------------------------------------------------------------------- host facts


def host_layout() -> dict[str, str]:
    """This host's :data:`SYSTEM_DIRS`: ``"link:<target>"`` (merged /usr) or ``"dir"``; absent ones left out."""
    layout: dict[str, str] = {}
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            layout[path] = "link:" + os.readlink(path)
        elif os.path.isdir(path):
            layout[path] = "dir"
    return layout


def etc_files(home: str, network: bool = False) -> dict[str, str]:
    """The content of the synthesized ``/etc`` files: ``passwd`` and ``group`` naming only
    :data:`INNER_USER` (with ``home``), ``root`` and ``nobody``; ``hosts`` with localhost, unless
    the sandbox has the network (then the host's ``/etc/hosts`` is bound instead)."""
    files = {
        "passwd": (
            f"root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
            f"{INNER_USER}:x:{INNER_UID}:{INNER_GID}:hud-gym sandbox:{home}:/bin/bash\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        ),
        "group": f"root:x:0:\n{INNER_USER}:x:{INNER_GID}:\nnogroup:x:65534:\n",
    }
    if not network:
        files["hosts"] = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
    return files
