#!/usr/bin/env bash
# Builds the desktop app's Linux packages with Tauri's bundler: the `.deb` (default) and,
# where GitHub is reachable, the `.AppImage`. Both hold `tap-desktop`, `tap`, the icons and
# the desktop entry. Prints the path of each package on stdout, one a line. Next to them
# (bundle/extension/), the browser extension's zip (extensions/browser, docs/browser.md),
# named on stderr only, so `deb=$(scripts/package-linux.sh)` still gets the one path.
#
#   scripts/package-linux.sh [--debug] [--bundles deb|appimage|deb,appimage]
#
# --debug bundles the debug build (what CI tests: it reuses the test build, and the
# package is the same apart from the binaries' size and speed).
#
# The AppImage cannot be built offline: Tauri's bundler downloads linuxdeploy and its
# plugins from GitHub at bundle time (package registries are not enough).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

profile=release
bundles=deb
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) profile=debug ;;
    --bundles) bundles="${2:?--bundles needs a value}"; shift ;;
    *) echo "usage: $0 [--debug] [--bundles deb|appimage|deb,appimage]" >&2; exit 2 ;;
  esac
  shift
done

setup_rust
setup_node
setup_desktop_build
setup_packaging

step "cargo build -p tap-cli ($profile): the \`tap\` the package ships"
cargo_profile=()
[ "$profile" = release ] && cargo_profile=(--release)
cargo build -p tap-cli --locked "${cargo_profile[@]}" >&2
tap_bin="$CARGO_TARGET_DIR/$profile/tap"

step "tauri build --bundles $bundles ($profile)"
# The path of `tap` depends on CARGO_TARGET_DIR and the profile, so it is given here rather
# than in tauri.conf.json (merged over it). Installed as /usr/bin/tap next to tap-desktop.
extra=$(printf '{"bundle":{"linux":{"deb":{"files":{"/usr/bin/tap":"%s"}},"appimage":{"files":{"/usr/bin/tap":"%s"}}}}}' \
  "$tap_bin" "$tap_bin")
tauri_profile=()
[ "$profile" = debug ] && tauri_profile=(--debug)
# The CLI finds the app through src-tauri/tauri.conf.json (a link to the root one).
(cd src-tauri && ../scripts/packaging/node_modules/.bin/tauri build "${tauri_profile[@]}" \
  --ci --bundles "$bundles" --config "$extra" >&2)

bundle_dir="$CARGO_TARGET_DIR/$profile/bundle"

step "the browser extension's zip (extensions/browser/build.mjs --zip)"
# It carries the TypeScript SDK's browser build, which build.mjs rebuilds when stale (tsc is
# one of the SDK's dev dependencies).
if [ ! -d sdk/typescript/node_modules/typescript ]; then
  npm ci --prefix sdk/typescript --no-audit --no-fund --silent >&2
fi
extension_version=$(node -p 'require("./extensions/browser/manifest.json").version')
extension_zip="$bundle_dir/extension/tap-gateway-browser-extension_$extension_version.zip"
extension_dir=$(mktemp -d)
trap 'rm -rf "$extension_dir"' EXIT
mkdir -p "$bundle_dir/extension"
node extensions/browser/build.mjs "$extension_dir" --zip "$extension_zip" >&2
echo "browser extension: $extension_zip" >&2
for kind in ${bundles//,/ }; do
  case "$kind" in
    deb) ls -t "$bundle_dir"/deb/*.deb | head -1 ;;
    appimage) ls -t "$bundle_dir"/appimage/*.AppImage | head -1 ;;
  esac
done
