#!/usr/bin/env bash
# A Node 22 binary for the tests that run a child process on Node 22 as well as on the running Node
# (test/events/webhook-deadline.test.ts). Taken from the npm registry's node-linux-<arch> package
# with `npm pack` (no install script runs), extracted once into the cache folder, reused afterwards.
# Prints the binary's path on stdout.
set -euo pipefail

cache="${XDG_CACHE_HOME:-$HOME/.cache}/chat-backend/node22"
bin="$cache/bin/node"
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q '^v22\.'; then
  echo "$bin"
  exit 0
fi

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "fetch-node22: no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
npm pack "node-linux-$arch@22" --pack-destination "$work" --silent >/dev/null
tar -xzf "$work"/node-linux-"$arch"-*.tgz -C "$work" package/bin/node
mkdir -p "$cache/bin"
mv "$work/package/bin/node" "$bin.partial"
"$bin.partial" --version | grep -q '^v22\.' || { echo "fetch-node22: the package did not hold a Node 22 binary" >&2; exit 1; }
mv "$bin.partial" "$bin"
echo "$bin"
