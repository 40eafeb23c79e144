#!/usr/bin/env bash
# Checks the Python packaging end to end (docs/PACKAGING.md): builds the wheel with the dev
# virtualenv's maturin and prints its size; checks it holds the typing files (py.typed,
# _native.pyi), the CLI entry points and the crate version, and that its native module needs no
# OpenSSL; installs it into a fresh virtualenv and runs the API, the `nandlab` console script and
# `python -m nandlab` there; then does the same for `pip install .` from the source tree (PEP 517
# build isolation: maturin comes from PyPI, so this step needs network) with OpenSSL made
# unreachable, so that it fails if anything in the wheel's build still wants it.
#
# Usage: bash scripts/check_wheel.sh   (after `make python`). PYTHON=python3.X picks the base
# interpreter of the fresh virtualenvs; FRESH_TARGET=1 builds `pip install .` in an empty cargo
# target directory, as on a new machine (every crate compiled: minutes), instead of reusing
# target/. Exit status 0 when every check passed.

set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
MATURIN=$ROOT/.venv/bin/maturin
WORK=$(mktemp -d "${TMPDIR:-/tmp}/nandlab-wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

step() { printf '\n== %s\n' "$*"; }
fail() {
    echo "FAILED: $*" >&2
    exit 1
}

[ -x "$MATURIN" ] || fail "$MATURIN is missing: run \`make python\` first"

# The version every part must carry: the workspace's crate version.
CRATE_VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)

step "build: $MATURIN build --release --out DIR"
started=$SECONDS
"$MATURIN" build --release --quiet --out "$WORK/dist"
WHEEL=$(ls "$WORK"/dist/nandlab-*.whl)
bytes=$(stat -c %s "$WHEEL")
echo "wheel: $(basename "$WHEEL")"
echo "size: $bytes bytes ($(awk -v b="$bytes" 'BEGIN { printf "%.2f MiB", b / 1048576 }')), built in $((SECONDS - started)) s"

step "contents (unzip -l)"
unzip -l "$WHEEL" | tee "$WORK/listing"
for file in nandlab/py.typed nandlab/_native.pyi nandlab/_native.abi3.so nandlab/__init__.py \
    nandlab/__main__.py nandlab/_cli.py; do
    grep -q " $file\$" "$WORK/listing" || fail "$file is not in the wheel"
    echo "has $file"
done
if grep -E '__pycache__|\.pyc$' "$WORK/listing"; then fail "compiled Python files in the wheel"; fi
metadata=$(unzip -p "$WHEEL" "nandlab-$CRATE_VERSION.dist-info/METADATA") ||
    fail "no nandlab-$CRATE_VERSION.dist-info/METADATA: the wheel's version is not the crate's"
grep -qx "Version: $CRATE_VERSION" <<<"$metadata" || fail "METADATA's version is not $CRATE_VERSION"
grep -qx 'Requires-Dist: pyarrow>=10' <<<"$metadata" || fail "pyarrow is not a dependency"
echo "version $CRATE_VERSION (the crate's); dependencies:"
grep '^Requires-Dist:' <<<"$metadata" | sed 's/^/  /'
entry_points=$(unzip -p "$WHEEL" "nandlab-$CRATE_VERSION.dist-info/entry_points.txt")
grep -qE '^nandlab ?= ?nandlab\._cli:console_main$' <<<"$entry_points" ||
    fail "no \`nandlab\` console script in entry_points.txt"
echo "console script: nandlab = nandlab._cli:console_main"

step "the native module's shared libraries (ldd): no libssl/libcrypto"
unzip -q "$WHEEL" nandlab/_native.abi3.so -d "$WORK/module"
ldd "$WORK/module/nandlab/_native.abi3.so" | tee "$WORK/ldd"
if grep -E 'libssl|libcrypto' "$WORK/ldd"; then fail "the module links OpenSSL"; fi
echo "module: $(stat -c %s "$WORK/module/nandlab/_native.abi3.so") bytes, no OpenSSL"

# Runs the installed package of virtualenv $1 from outside the source tree (so that nothing
# of python/ is importable by accident).
smoke() {
    local venv=$1
    (
        cd "$WORK"
        "$venv/bin/python" - "$venv" <<'EOF'
import sys
import nandlab
assert nandlab.__file__.startswith(sys.argv[1]), nandlab.__file__
r = nandlab.run({})
print(f"nandlab.run({{}}): {nandlab.build_version}, erases {r.metrics['erases']}, "
      f"write amplification {r.metrics['write_amplification']:.4f}")
EOF
        echo "\$ nandlab --version"
        version=$("$venv/bin/nandlab" --version)
        echo "$version"
        [ "$version" = "$("$venv/bin/python" -c 'import nandlab; print(nandlab.build_version)')" ] ||
            fail "the console script's version is not nandlab.build_version"
        echo "\$ python -m nandlab presets"
        "$venv/bin/python" -m nandlab presets
        echo "\$ nandlab serve --image x   (expected: refused, exit status 2)"
        status=0
        "$venv/bin/nandlab" serve --image "$WORK/x.img" || status=$?
        [ "$status" = 2 ] || fail "serve exited with $status, not 2"
    )
}

step "pip install the wheel into a fresh virtualenv ($PYTHON -m venv)"
started=$SECONDS
"$PYTHON" -m venv "$WORK/venv-wheel"
"$WORK/venv-wheel/bin/pip" install --quiet --disable-pip-version-check "$WHEEL"
echo "installed in $((SECONDS - started)) s"
smoke "$WORK/venv-wheel"

step "pip install . (the source tree; maturin from PyPI; OpenSSL unreachable) into another one"
started=$SECONDS
"$PYTHON" -m venv "$WORK/venv-source"
if [ "${FRESH_TARGET:-0}" = 1 ]; then
    export CARGO_TARGET_DIR=$WORK/target
    echo "(cargo target directory: a fresh $CARGO_TARGET_DIR)"
fi
# openssl-sys reads OPENSSL_DIR before anything else, and pkg-config is how it would find the
# system's: with both pointing nowhere, a dependency on OpenSSL fails the build here.
OPENSSL_DIR=/nonexistent PKG_CONFIG=/bin/false \
    "$WORK/venv-source/bin/pip" install --quiet --disable-pip-version-check "$ROOT"
echo "built and installed in $((SECONDS - started)) s"
smoke "$WORK/venv-source"

step "all checks passed"
