#!/usr/bin/env bash
# `make check`: the gates CI runs before the tests. Each prints what it finds; the script fails if
# any gate fails (all of them run, so one pass shows every problem).
#   ruff check    lint (rules in pyproject.toml [tool.ruff.lint], complexity (C901) at most 15 included)
#   ruff format   formatting (--check: nothing is rewritten; run `ruff format` to fix)
#   mypy          types of hud_gym (with hud_gym.controllers and hud_gym.wrappers)
#   layers        the import-layer contract (.importlinter; docs/architecture.md)
#   cycles        no new import cycle, function-level imports included (scripts/import_cycles.py)
#   docs          the docs site's strict build (mkdocs.yml: a broken link, a page left out of the nav or a
#                 docstring mkdocstrings cannot read fails it); offline, into a temporary folder
# Usage: scripts/check.sh; PY (default .venv/bin/python) has the dev extra installed.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${PY:-$root/.venv/bin/python}"
case "$py" in /*) ;; *) py="$root/$py" ;; esac
bin="$(dirname "$py")"
cd "$root"
paths=(hud_gym controllers wrappers tests benchmarks examples scripts docs/*.py setup.py)
failed=()

echo "== ruff check"; "$bin/ruff" check "${paths[@]}" || failed+=("ruff check")
echo "== ruff format --check"; "$bin/ruff" format --check --quiet "${paths[@]}" || failed+=("ruff format")

# mypy and import-linter see controllers/ and wrappers/ as hud_gym.controllers and hud_gym.wrappers
# through a symlinked tree, as the wheel installs them (the editable install's import hook hides them).
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/hud_gym"
for entry in "$root"/hud_gym/*; do ln -s "$entry" "$tree/hud_gym/"; done
ln -s "$root/controllers" "$tree/hud_gym/controllers"
ln -s "$root/wrappers" "$tree/hud_gym/wrappers"

echo "== mypy"
(cd "$tree" && "$bin/mypy" --config-file "$root/pyproject.toml" --cache-dir "$root/.mypy_cache" -p hud_gym) \
  | sed "s|^hud_gym/controllers/|controllers/|; s|^hud_gym/wrappers/|wrappers/|" || failed+=("mypy")

echo "== import layers"
(cd "$tree" && PYTHONPATH="$tree" "$py" -c 'import sys; from importlinter.cli import lint_imports_command; sys.argv[0] = "lint-imports"; sys.exit(lint_imports_command())' \
    --config "$root/.importlinter" --no-cache) | tail -4 || failed+=("import layers")

echo "== import cycles"
(cd "$tree" && PYTHONPATH="$tree" "$py" "$root/scripts/import_cycles.py") || failed+=("import cycles")

echo "== docs (mkdocs build --strict)"
site="$(mktemp -d)"
# Not --quiet: mkdocs 1.6 then drops the warnings before --strict counts them (a page left out of
# the nav passed). The log is shown when the build fails.
if ! NO_MKDOCS_2_WARNING=1 "$bin/mkdocs" build --strict --config-file "$root/mkdocs.yml" --site-dir "$site" \
  >"$site.log" 2>&1; then
  grep -v "^INFO" "$site.log"
  failed+=("docs")
fi
rm -rf "$site" "$site.log"

if (( ${#failed[@]} )); then
  echo "make check: failed: ${failed[*]}"
  exit 1
fi
echo "make check: ruff, format, mypy, the import layers, the import cycles and the docs build are clean"
