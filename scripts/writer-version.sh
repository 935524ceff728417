#!/usr/bin/env bash
# The version of the writer module (outbox/) that the root module requires.
#
# Local builds use outbox/ of the checkout (go.work). A `go install ...@v`
# and the release use the version go.mod requires, so go.mod must require
# the commit that holds outbox/ as it is:
#
#   scripts/writer-version.sh pin             # go.mod requires the last commit that changed outbox/
#   scripts/writer-version.sh current         # the version that pin would require
#   scripts/writer-version.sh revision VER    # the git revision of a version (commit or outbox/ tag)
#
# pin works offline: it serves that version from a file-based proxy built
# from git (tools/modproxy) and records it with go get.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT_MOD=github.com/outboxkit/terraform-provider-outbox
WRITER_MOD=$ROOT_MOD/outbox
TAG_PREFIX=outbox/

# revision VER: a pseudo-version names its commit in its last 12 hex digits;
# a release version is the tag outbox/VER.
revision() {
	local v=$1 short
	if [[ $v =~ -([0-9]{14})-([0-9a-f]{12})$ || $v =~ \.([0-9]{14})-([0-9a-f]{12})$ ]]; then
		short=${BASH_REMATCH[2]}
		git rev-parse --verify --quiet "$short^{commit}" || {
			echo "writer-version: $v names commit $short, which this repository does not hold" >&2
			return 1
		}
	else
		git rev-parse --verify --quiet "$TAG_PREFIX$v^{commit}" || {
			echo "writer-version: no tag $TAG_PREFIX$v" >&2
			return 1
		}
	fi
}

# current: the tag on the last commit that changed outbox/, or its
# pseudo-version (after the newest earlier outbox/ tag, if any), as the go
# command would compute it.
current() {
	local rev tag base when short major minor patch
	rev=$(git log -1 --format=%H -- outbox/)
	tag=$(git tag --points-at "$rev" --list "${TAG_PREFIX}v*" | sort -V | tail -1)
	if [ -n "$tag" ]; then
		echo "${tag#"$TAG_PREFIX"}"
		return
	fi
	when=$(TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd "$rev")
	short=$(git rev-parse --short=12 "$rev")
	base=$(git describe --tags --abbrev=0 --match "${TAG_PREFIX}v*" "$rev" 2>/dev/null || true)
	if [ -z "$base" ]; then
		echo "v0.0.0-$when-$short"
		return
	fi
	IFS=. read -r major minor patch <<<"${base#"$TAG_PREFIX"}"
	echo "$major.$minor.$((${patch%%-*} + 1))-0.$when-$short"
}

pin() {
	local v rev proxy
	v=$(current)
	rev=$(revision "$v")
	proxy=$(mktemp -d)
	trap 'rm -rf "$proxy"' RETURN
	go run ./tools/modproxy -out "$proxy" "$WRITER_MOD@$v=$rev:outbox" >/dev/null
	GOWORK=off GOFLAGS=-mod=mod GONOSUMDB="$ROOT_MOD" GOPROXY="file://$proxy,$(go env GOPROXY)" \
		go get "$WRITER_MOD@$v"
	echo "writer-version: go.mod requires $WRITER_MOD $v"
}

case "${1:-}" in
revision) revision "${2:?usage: writer-version.sh revision VERSION}" ;;
current) current ;;
pin) pin ;;
*)
	echo "usage: writer-version.sh pin | current | revision VERSION" >&2
	exit 2
	;;
esac
