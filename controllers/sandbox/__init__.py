"""Sandboxes for what a task or an agent runs: bubblewrap as an unprivileged uid, with a private
home and tmp, the host's ``/usr`` read-only, its own pid, ipc and (unless asked) network
namespaces.

- :mod:`.policy`: what a sandbox sees, and the ``bwrap`` command line of it (pure);
- :mod:`.runner`: a running sandbox, programs started in it through its supervisor;
- :mod:`.supervisor`: the in-sandbox script (standard library only) that starts them;
- :mod:`.process`: such a program seen from the host;
- :mod:`.limits`: per-episode resource limits (a cgroup per episode, :mod:`.cgroups` and
  :mod:`.cgroup_detect`, else rlimits) and whether an episode reached one.
"""

from hud_gym.controllers.sandbox.policy import (
    Bind,
    Identity,
    SandboxPolicy,
    bwrap_argv,
    identity_for,
)
from hud_gym.controllers.sandbox.process import SandboxProcess
from hud_gym.controllers.sandbox.runner import Sandbox, SandboxError

__all__ = [
    "Bind",
    "Identity",
    "Sandbox",
    "SandboxError",
    "SandboxPolicy",
    "SandboxProcess",
    "bwrap_argv",
    "identity_for",
]
