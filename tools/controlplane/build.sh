#!/usr/bin/env bash
# Build (or reuse) the control-plane binaries Berth's cluster tests, demo and
# benchmarks run against: etcd, kube-apiserver, kube-scheduler,
# kube-controller-manager and kubectl.
#
# Why a script: there are no release downloads here, only the Go module proxy,
# and a cold build takes many minutes on two cores. So binaries are compiled
# once from the pinned wrapper modules next to this file and cached outside the
# repository, keyed by version; every later call returns at once. When a
# complete cache lacks a binary that this script has since learned to build
# (kube-controller-manager came later than the other four), only the missing
# ones are built and added; the others are never rebuilt.
#
# Usage: tools/controlplane/build.sh [--print-bin-dir] [--force]
#   --print-bin-dir  print the cache directory and exit, building nothing
#   --force          rebuild everything even when the cache is complete
# The bin directory is always the last line on stdout; progress goes to stderr.
# Env: BERTH_CACHE (default ~/.cache/berth), GO (default `go`).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
min_go="1.26.0"

# The versions come from the committed go.mod files, so bumping a pin there
# selects a new cache directory without editing this script.
# Matches both `require m v` and a line inside a `require (...)` block.
pinned() { awk -v m="$1" '{ if ($1 == "require") $0 = substr($0, 9) } $1 == m && $2 ~ /^v/ && $3 != "=>" { print $2; exit }' "$2"; }
k8s_version="$(pinned k8s.io/kubernetes "$here/go.mod")"
etcd_version="$(pinned go.etcd.io/etcd/server/v3 "$here/etcd/go.mod")"
if [[ -z "$k8s_version" || -z "$etcd_version" ]]; then
    echo "build.sh: cannot read pinned versions from $here/go.mod and $here/etcd/go.mod" >&2
    exit 2
fi

cache_root="${BERTH_CACHE:-$HOME/.cache/berth}"
bin_dir="$cache_root/controlplane/k8s-$k8s_version-etcd-$etcd_version/bin"
binaries=(etcd kube-apiserver kube-scheduler kube-controller-manager kubectl)

print_only=0
force=0
for arg in "$@"; do
    case "$arg" in
        --print-bin-dir) print_only=1 ;;
        --force) force=1 ;;
        -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build.sh: unknown argument: $arg" >&2; exit 2 ;;
    esac
done

if (( print_only )); then
    echo "$bin_dir"
    exit 0
fi

# The stamp is written only after every binary is in place, so an interrupted
# build is never mistaken for a complete cache. A stamped cache that lacks
# some binary gets just those added (see the end of this script).
missing=()
if (( ! force )) && [[ -f "$bin_dir/.complete" ]]; then
    for name in "${binaries[@]}"; do
        [[ -x "$bin_dir/$name" ]] || missing+=("$name")
    done
    if (( ${#missing[@]} == 0 )); then
        echo "$bin_dir"
        exit 0
    fi
else
    missing=("${binaries[@]}")
fi

go_bin="${GO:-go}"
if ! command -v "$go_bin" >/dev/null 2>&1; then
    cat >&2 <<EOF
build.sh: the Go toolchain ('$go_bin') was not found on PATH.
Go >= $min_go is needed to build etcd and Kubernetes $k8s_version from the Go
module proxy. Install it (e.g. the official tarball into /usr/local/go and add
/usr/local/go/bin to PATH), or point GO=/path/to/go at one.
EOF
    exit 3
fi
go_version="$("$go_bin" env GOVERSION 2>/dev/null || true)"
go_version="${go_version#go}"
if [[ -z "$go_version" ]] || [[ "$(printf '%s\n%s\n' "$min_go" "$go_version" | sort -V | head -n1)" != "$min_go" ]]; then
    echo "build.sh: Go >= $min_go is needed (Kubernetes $k8s_version's go.mod says 'go 1.26.0'); found '${go_version:-unknown}' at $(command -v "$go_bin")." >&2
    echo "Install a newer Go toolchain, or point GO=/path/to/go at one." >&2
    exit 3
fi

# Static binaries need no C toolchain; GOTOOLCHAIN=local makes a too-old Go
# fail here instead of silently trying to download another toolchain.
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-trimpath -buildvcs=false"

k8s_minor="$(echo "$k8s_version" | cut -d. -f2)"
build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
    k8s_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done
# etcd's version number is a constant; only the commit is link-time, and the
# module zip carries none, so say where the build came from instead.
etcd_ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$etcd_version"

# Build into a scratch directory beside the cache and move it in at the end, so
# concurrent or interrupted builds never leave a half-filled bin directory.
mkdir -p "$(dirname "$bin_dir")"
staging="$(mktemp -d "$(dirname "$bin_dir")/.build.XXXXXX")"
chmod 755 "$staging"
trap 'rm -rf "$staging"' EXIT

log() { echo "[controlplane build $(date +%H:%M:%S)] $*" >&2; }

log "building ${missing[*]} (Kubernetes $k8s_version, etcd $etcd_version) with $("$go_bin" version | cut -d' ' -f3) (a cold build takes tens of minutes on 2 cores)"
log "target: $bin_dir"
total_start=$SECONDS

wanted() {
    local name
    for name in "${missing[@]}"; do [[ "$name" == "$1" ]] && return 0; done
    return 1
}

build_one() {
    local name="$1" module_dir="$2" pkg="$3" ldflags="$4" start=$SECONDS
    wanted "$name" || return 0
    log "building $name ($pkg) ..."
    (cd "$module_dir" && "$go_bin" build -ldflags "$ldflags" -o "$staging/$name" "$pkg")
    log "built $name in $((SECONDS - start))s ($(du -h "$staging/$name" | cut -f1))"
}

log "downloading modules ..."
(cd "$here" && "$go_bin" mod download)
if wanted etcd; then (cd "$here/etcd" && "$go_bin" mod download); fi

build_one etcd "$here/etcd" go.etcd.io/etcd/server/v3 "$etcd_ldflags"
build_one kube-apiserver "$here" k8s.io/kubernetes/cmd/kube-apiserver "$k8s_ldflags"
build_one kube-scheduler "$here" k8s.io/kubernetes/cmd/kube-scheduler "$k8s_ldflags"
build_one kube-controller-manager "$here" k8s.io/kubernetes/cmd/kube-controller-manager "$k8s_ldflags"
build_one kubectl "$here" k8s.io/kubernetes/cmd/kubectl "$k8s_ldflags"

for name in "${missing[@]}"; do
    "$staging/$name" --version >/dev/null 2>&1 || "$staging/$name" version --client >/dev/null 2>&1 || {
        log "$name was built but does not run"; exit 4; }
done

if (( ${#missing[@]} < ${#binaries[@]} )); then
    # Adding to a complete cache that tests may be using right now: each new
    # binary is renamed into place (atomic on one file system; nothing already
    # there is touched), and the stamp is replaced last, the same way. The
    # stamp keeps what it said and records the addition.
    for name in "${missing[@]}"; do
        mv "$staging/$name" "$bin_dir/$name"
    done
    {
        grep -v '^binaries=' "$bin_dir/.complete"
        echo "added=${missing[*]} go=$go_version built=$build_date"
        echo "binaries=${binaries[*]}"
    } > "$staging/.complete"
    mv "$staging/.complete" "$bin_dir/.complete"
    log "added ${missing[*]} in $((SECONDS - total_start))s"
else
    {
        echo "kubernetes=$k8s_version"
        echo "etcd=$etcd_version"
        echo "go=$go_version"
        echo "built=$build_date"
        echo "binaries=${binaries[*]}"
    } > "$staging/.complete"
    rm -rf "$bin_dir"
    mv "$staging" "$bin_dir"
    trap - EXIT
    log "all binaries built in $((SECONDS - total_start))s"
fi
echo "$bin_dir"
