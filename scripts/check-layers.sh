#!/usr/bin/env bash
# The import-layer contract (.importlinter): import-linter over a symlinked tree in which
# controllers/ and wrappers/ sit inside hud_gym/, as the wheel installs them (the editable install
# maps them with an import hook that import-linter cannot follow).
# Usage: scripts/check-layers.sh [extra lint-imports arguments]; PY (default .venv/bin/python) must
# have import-linter installed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${PY:-$root/.venv/bin/python}"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/hud_gym"
for entry in "$root"/hud_gym/*; do
    ln -s "$entry" "$tree/hud_gym/"
done
ln -s "$root/controllers" "$tree/hud_gym/controllers"
ln -s "$root/wrappers" "$tree/hud_gym/wrappers"
cd "$tree"
PYTHONPATH="$tree" "$py" -c 'import sys; from importlinter.cli import lint_imports_command; sys.argv[0] = "lint-imports"; sys.exit(lint_imports_command())' \
    --config "$root/.importlinter" --no-cache "$@"
