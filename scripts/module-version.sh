#!/usr/bin/env bash
# The versions of the nested modules that the root module requires: the
# writer (outbox/), the consumer kit (consumer/) and the maintained minidyn
# fork (third_party/minidyn).
#
# Local builds use the nested modules of the checkout (go.work). A `go
# install ...@v` and the release use the versions go.mod requires, so go.mod
# must require, for each nested module, the commit that holds it as it is:
#
#   scripts/module-version.sh pin                 # go.mod requires, per stale nested module, the last commit that changed it
#   scripts/module-version.sh current DIR         # the version that pin would require for DIR
#   scripts/module-version.sh revision DIR VER    # the git revision of DIR's version VER (commit or DIR/ tag)
#   scripts/module-version.sh required DIR        # the version of DIR that go.mod at HEAD requires
#   scripts/module-version.sh proxy-args          # tools/modproxy arguments serving every required version
#   scripts/module-version.sh stale               # the nested modules that changed since their required version
#   scripts/module-version.sh sync-work           # go.work replaces each required version by its directory
#   scripts/module-version.sh check-work          # fails unless go.work does so for the versions go.mod requires
#
# pin works offline: it serves those versions from a file-based proxy built
# from git (tools/modproxy) and records them with go get.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT_MOD=github.com/outboxkit/terraform-provider-outbox
# NESTED are the nested modules' directories; each one's module path is
# ROOT_MOD/DIR and its release tags are DIR/vX.Y.Z.
NESTED="outbox consumer third_party/minidyn"

module_of() { echo "$ROOT_MOD/$1"; }

# revision DIR VER: a pseudo-version names its commit in its last 12 hex
# digits; a release version is the tag DIR/VER.
revision() {
	local dir=$1 v=$2 short
	if [[ $v =~ -([0-9]{14})-([0-9a-f]{12})$ || $v =~ \.([0-9]{14})-([0-9a-f]{12})$ ]]; then
		short=${BASH_REMATCH[2]}
		git rev-parse --verify --quiet "$short^{commit}" || {
			echo "module-version: $dir $v names commit $short, which this repository does not hold" >&2
			return 1
		}
	else
		git rev-parse --verify --quiet "$dir/$v^{commit}" || {
			echo "module-version: no tag $dir/$v" >&2
			return 1
		}
	fi
}

# current DIR: the tag on the last commit that changed DIR/, or its
# pseudo-version (after the newest earlier DIR/ tag, if any), as the go
# command would compute it.
# last_change DIR: the commit, along HEAD's first parents, from which DIR is
# as it is at HEAD: the last commit that changed it, or the merge that
# brought in a branch's change (git log -- DIR may name the branch's own
# commit, whose tree lacks what main changed meanwhile).
last_change() {
	local dir=$1 rev parent want
	rev=$(git rev-parse HEAD)
	want=$(git rev-parse "HEAD:$dir")
	while parent=$(git rev-parse -q --verify "$rev^1") &&
		[ "$(git rev-parse -q --verify "$parent:$dir" || true)" = "$want" ]; do
		rev=$parent
	done
	echo "$rev"
}

current() {
	local dir=$1 rev tag base when short major minor patch
	rev=$(last_change "$dir")
	tag=$(git tag --points-at "$rev" --list "$dir/v*" | sort -V | tail -1)
	if [ -n "$tag" ]; then
		echo "${tag#"$dir/"}"
		return
	fi
	when=$(TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd "$rev")
	short=$(git rev-parse --short=12 "$rev")
	base=$(git describe --tags --abbrev=0 --match "$dir/v*" "$rev" 2>/dev/null || true)
	if [ -z "$base" ]; then
		echo "v0.0.0-$when-$short"
		return
	fi
	IFS=. read -r major minor patch <<<"${base#"$dir/"}"
	echo "$major.$minor.$((${patch%%-*} + 1))-0.$when-$short"
}

# gomod: go.mod at HEAD, or in the work tree with FROM_WORKTREE=1.
gomod() {
	if [ -n "${FROM_WORKTREE:-}" ]; then cat go.mod; else git show HEAD:go.mod; fi
}

# required DIR: the version go.mod (at HEAD, see gomod) requires.
required() {
	local v
	v=$(gomod | awk -v m="$(module_of "$1")" '$1 == m { print $2 }')
	[ -n "$v" ] || {
		echo "module-version: go.mod does not require $(module_of "$1")" >&2
		return 1
	}
	echo "$v"
}

# proxy-args: MODULE@VERSION=REVISION:DIR for each nested module at the
# version go.mod at HEAD requires.
proxy_args() {
	local dir v
	for dir in $NESTED; do
		v=$(required "$dir")
		echo "$(module_of "$dir")@$v=$(revision "$dir" "$v"):$dir"
	done
}

# stale: the nested modules whose directory changed since the commit of the
# version go.mod requires.
stale() {
	local dir v
	for dir in $NESTED; do
		v=$(required "$dir")
		git diff --quiet "$(revision "$dir" "$v")" HEAD -- "$dir/" || echo "$dir"
	done
}

# work_replaces: the replace block go.work must hold. The go command reads
# the go.mod of every version a workspace module's requirements name, even
# when that module is in the workspace, and no proxy serves the nested
# modules' pinned versions before a release: replacing those versions by the
# directories keeps a build on a machine with an empty module cache offline.
work_replaces() {
	local dir
	echo "replace ("
	for dir in $NESTED; do
		printf '\t%s %s => ./%s\n' "$(module_of "$dir")" "$(FROM_WORKTREE=1 required "$dir")" "$dir"
	done
	echo ")"
}

sync_work() {
	local body
	body=$(sed '/^replace (/,/^)/d' go.work)
	printf '%s\n\n%s\n' "$(sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' <<<"$body")" "$(work_replaces)" >go.work
}

check_work() {
	local want
	want=$(work_replaces)
	if [ "$(sed -n '/^replace (/,/^)/p' go.work)" != "$want" ]; then
		echo "module-version: go.work does not replace the nested modules' required versions by their directories; run scripts/module-version.sh sync-work (make pin-modules does). It should hold:" >&2
		echo "$want" >&2
		return 1
	fi
}

pin() {
	local dir v proxy args=() gets=()
	for dir in $NESTED; do
		# A required version that holds DIR as it is stays.
		v=$(required "$dir")
		git diff --quiet "$(revision "$dir" "$v")" HEAD -- "$dir/" || v=$(current "$dir")
		args+=("$(module_of "$dir")@$v=$(revision "$dir" "$v"):$dir")
		gets+=("$(module_of "$dir")@$v")
	done
	# The versions go.mod requires now are served too: go get reads their
	# go.mod files, which a new machine's module cache does not hold.
	mapfile -t args < <({ printf '%s\n' "${args[@]}"; proxy_args; } | sort -u)
	proxy=$(mktemp -d)
	trap 'rm -rf "$proxy"' RETURN
	go run ./tools/modproxy -out "$proxy" "${args[@]}" >/dev/null
	GOWORK=off GOFLAGS=-mod=mod GONOSUMDB="$ROOT_MOD" GOPROXY="file://$proxy,$(go env GOPROXY)" \
		go get "${gets[@]}"
	printf 'module-version: go.mod requires %s\n' "${gets[@]}"
	sync_work
}

case "${1:-}" in
revision) revision "${2:?usage: module-version.sh revision DIR VERSION}" "${3:?usage: module-version.sh revision DIR VERSION}" ;;
current) current "${2:?usage: module-version.sh current DIR}" ;;
required) required "${2:?usage: module-version.sh required DIR}" ;;
proxy-args) proxy_args ;;
stale) stale ;;
sync-work) sync_work ;;
check-work) check_work ;;
pin) pin ;;
*)
	echo "usage: module-version.sh pin | current DIR | revision DIR VERSION | required DIR | proxy-args | stale | sync-work | check-work" >&2
	exit 2
	;;
esac
