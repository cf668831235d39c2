#!/usr/bin/env bash
# A venv layered over another: it sees every package of BASE (a .pth adds BASE's site-packages
# after its own) and installs only what differs, which shadows BASE's copy for this venv alone.
# `make install` uses it for the trainers whose pins conflict with the main venv (verifiers 0.4
# pins openai<3; the agents extra has openai 3.x). BASE is never modified: pip does not uninstall
# a package outside the environment it installs into.
#
# Usage: scripts/overlay-venv.sh BASE_PYTHON OVERLAY_DIR PACKAGE...
set -euo pipefail
base_python=$1
overlay=$2
shift 2
if [ ! -x "$overlay/bin/python" ]; then
    "$base_python" -m venv --without-pip "$overlay"
fi
site=$("$overlay/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
# addsitedir (not a bare path) so that BASE's own .pth files run too (an editable install's finder).
"$base_python" -c "import sys; print('\n'.join(f'import site; site.addsitedir({p!r})' for p in sys.path if p.endswith('site-packages')))" \
    > "$site/zz-overlay-base.pth"
"$overlay/bin/python" -m pip install -q "$@"
