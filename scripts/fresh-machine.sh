#!/usr/bin/env bash
# The fresh-machine check: runs the README's quickstart and test command on a minimal
# Debian 12 that has only Go, plus what it takes to get Go and this repository there
# (git, make, CA certificates). Everything else the test command must install itself.
#
#   scripts/fresh-machine.sh                  # the README's build and quickstart, then make test
#   scripts/fresh-machine.sh 'COMMAND…'       # or COMMAND, run by bash in the checkout
#
# As root, on Debian or Ubuntu (debootstrap and slirp4netns are installed when missing):
#  1. debootstrap --variant=minbase bookworm into FATHOM_FRESH_DIR (default
#     /var/tmp/fathom-fresh/root; reused when there: delete it for a new one), from the
#     Debian mirror in /etc/apt/sources.list* (or FATHOM_FRESH_MIRROR);
#  2. copies Go (`go env GOROOT`) to its /usr/local/go and clones this checkout's HEAD to
#     /src/fathom (committed work only);
#  3. enters it with unshare (private network, mount and PID namespaces) and chroot.
#     slirp4netns gives the namespace a user-mode network to the outside (Debian's
#     mirror, the Go module proxy, the npm registry) with the host's loopback cut off:
#     the servers on this machine's 127.0.0.1 are not reachable, so the test command has
#     to install and start its own. /proc, /sys, /dev and /dev/shm are mounted in the
#     private mount namespace only, so they disappear with it; every process started
#     inside dies with the PID namespace.
# The environment inside is empty but for PATH (with /usr/local/go/bin), HOME and LANG:
# no GOFLAGS, an empty module and build cache at the first run (later runs reuse them
# and the installed packages; `rm -rf` the directory to start over).
set -eu

log() { echo "fresh-machine: $*" >&2; }
[ "$(id -u)" = 0 ] || { log "run as root: it builds a root filesystem and enters it with chroot"; exit 2; }
src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
dir=${FATHOM_FRESH_DIR:-/var/tmp/fathom-fresh/root}
cmd=${1:-'go build -o bin/fathom ./cmd/fathom && ./bin/fathom quickstart && make test'}
goroot=$(go env GOROOT)

need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v slirp4netns >/dev/null || need+=(slirp4netns)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; }
fi

if [ ! -e "$dir/etc/debian_version" ]; then
  mirror=${FATHOM_FRESH_MIRROR:-$(grep -rhoE '^(URIs:|deb) +[a-z]+://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | awk '{print $2; exit}')}
  mirror=${mirror:-http://deb.debian.org/debian}
  log "debootstrap --variant=minbase bookworm $dir $mirror"
  mkdir -p "$dir"
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 ||
    { tail -5 "$dir.debootstrap.log" >&2; exit 1; }
fi
if ! cmp -s "$goroot/VERSION" "$dir/usr/local/go/VERSION"; then
  log "copying Go from $goroot"
  rm -rf "$dir/usr/local/go" && cp -a "$goroot" "$dir/usr/local/go"
fi
[ -z "$(git -C "$src" status --porcelain)" ] || log "uncommitted changes in $src are not in the copy (HEAD only)"
rm -rf "$dir/src/fathom" && mkdir -p "$dir/src"
git clone -q --no-hardlinks "$src" "$dir/src/fathom"
git -C "$dir/src/fathom" checkout -q "$(git -C "$src" rev-parse HEAD)"
echo "nameserver 10.0.2.3" >"$dir/etc/resolv.conf" # slirp4netns's DNS forwarder
# A network that inspects TLS (a proxy with its own CA) needs that CA on every machine
# in it: the CAs this machine added locally go in too (trusted once ca-certificates is
# installed inside; node is pointed at the same file).
extra_ca=
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  mkdir -p "$dir/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$dir/usr/local/share/ca-certificates/"
  extra_ca=NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
  log "with this machine's local CA certificates: $(cd /usr/local/share/ca-certificates && echo *.crt)"
fi

# Runs inside the new namespaces (on the host's files until chroot).
inner='
set -e
for _ in $(seq 100); do ip link show tap0 >/dev/null 2>&1 && break; sleep 0.1; done
ip link set lo up
mount --bind "$D" "$D" # the root a mount point, as on a machine: ip netns exec remounts it
mount -t proc proc "$D/proc"
mount -t sysfs sysfs "$D/sys"
mount --rbind /dev "$D/dev"
mount -t tmpfs -o mode=1777 shm "$D/dev/shm"
exec chroot "$D" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" $X \
  PATH=/usr/local/go/bin:/root/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c "set -e
    echo \"fresh-machine: inside: \$(. /etc/os-release; echo \$PRETTY_NAME), \$(go version)\" >&2
    # What it takes to get Go and the repository onto the machine, and to type make.
    missing=\$(for p in git make ca-certificates; do dpkg -s \$p >/dev/null 2>&1 || echo \$p; done)
    if [ -n \"\$missing\" ]; then
      echo \"fresh-machine: installing \"\$missing >&2
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \$missing >/dev/null 2>&1
    fi
    update-ca-certificates >/dev/null 2>&1
    cd /src/fathom && echo \"fresh-machine: running: \$0\" >&2 && eval \"\$0\"" "$C"
'
log "entering $dir"
D=$dir C=$cmd X=$extra_ca unshare --net --mount --pid --fork --kill-child --propagation private bash -c "$inner" &
upid=$!
for _ in $(seq 100); do
  [ "$(readlink "/proc/$upid/ns/net" 2>/dev/null)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.1
done
# Interrupted: end the namespace's first process, which ends every process in it.
trap 'kill -KILL $(cat "/proc/$upid/task/$upid/children" 2>/dev/null) 2>/dev/null' INT TERM
slirp4netns --configure --mtu=65520 --disable-host-loopback "$upid" tap0 >"$dir.slirp4netns.log" 2>&1 &
spid=$!
rc=0; wait "$upid" || rc=$?
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true
if grep -q " $dir[/ ]" /proc/mounts; then log "still mounted under $dir:"; grep " $dir[/ ]" /proc/mounts >&2; rc=1; fi
log "done: exit $rc"
exit $rc
