#!/usr/bin/env bash
# Proves that `go install <command>@<version>` works for a user: from an
# empty GOPATH and module cache, outside this checkout, with no go.work.
#
# The version is not published, so this writes a file-based module proxy
# holding the root module at HEAD as $VERSION, and each nested module (the
# writer, outbox/, the consumer kit, consumer/, and the minidyn fork,
# third_party/minidyn) at the version
# go.mod requires, built from the git revision that version names (the
# commit of a pseudo-version, or the tag DIR/vX.Y.Z), as the public proxy
# would serve them. Every other module comes from the
# machine's module cache, read as a proxy, or from the configured GOPROXY.
#
#   scripts/check-go-install.sh                 # cmd/localaws
#   COMMANDS="cmd/localaws cmd/outbox" scripts/check-go-install.sh
#   STRICT=1 ...   # also fail when a nested module changed since its required version
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT_MOD=github.com/outboxkit/terraform-provider-outbox
WRITER_MOD=$ROOT_MOD/outbox
VERSION=${VERSION:-v0.0.0-test}
COMMANDS=${COMMANDS:-cmd/localaws}

for dir in $(scripts/module-version.sh stale); do
	msg="go.mod requires $ROOT_MOD/$dir $(scripts/module-version.sh required "$dir"), but $dir/ changed since: a go install gets the older module; run make pin-modules and commit go.mod and go.sum"
	if [ -n "${STRICT:-}" ]; then
		echo "check-go-install: $msg" >&2
		exit 1
	fi
	echo "check-go-install: warning: $msg" >&2
done
if [ -n "$(git status --porcelain -- . ':!bin' ':!dist')" ]; then
	echo "check-go-install: note: uncommitted changes are not part of the check; it installs HEAD ($(git rev-parse --short HEAD))"
fi

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mapfile -t nested < <(scripts/module-version.sh proxy-args)
go run ./tools/modproxy -out "$work/proxy" "$ROOT_MOD@$VERSION=HEAD" "${nested[@]}"
writer_version=$(scripts/module-version.sh required outbox)

real_proxy=$(go env GOPROXY)
cache_proxy=file://$(go env GOMODCACHE)/cache/download
mkdir -p "$work/gopath" "$work/elsewhere"
for cmd in $COMMANDS; do
	name=$(basename "$cmd")
	echo "check-go-install: go install $ROOT_MOD/$cmd@$VERSION" >&2
	# -trimpath (as make builds): the modules compile as in the checkout's
	# builds, whatever module cache they come from, so the build cache has them.
	(
		cd "$work/elsewhere"
		env GOPATH="$work/gopath" GOMODCACHE="$work/gopath/pkg/mod" GOBIN="$work/gopath/bin" \
			GOWORK=off GOFLAGS="-mod=mod -trimpath" GONOSUMDB="$ROOT_MOD" \
			GOPROXY="file://$work/proxy,$cache_proxy,$real_proxy" \
			go install "$ROOT_MOD/$cmd@$VERSION"
	)
	bin=$work/gopath/bin/$name
	# The binary must come from the proxy's versions, not from this checkout.
	info=$(go version -m "$bin")
	grep -q "^[[:space:]]*mod[[:space:]]*$ROOT_MOD[[:space:]]*$VERSION" <<<"$info" || {
		echo "check-go-install: $name was not built from $ROOT_MOD@$VERSION:" >&2
		echo "$info" >&2
		exit 1
	}
	if grep -qx "$WRITER_MOD" <<<"$(go list -deps "./$cmd")"; then
		grep -q "dep[[:space:]]*$WRITER_MOD[[:space:]]*$writer_version" <<<"$info" || {
			echo "check-go-install: $name does not use $WRITER_MOD $writer_version:" >&2
			echo "$info" >&2
			exit 1
		}
	fi
	# The exit status of -h is the command's choice (flag.ContinueOnError
	# returns flag.ErrHelp); what matters is that it runs and prints usage.
	usage=$("$bin" -h 2>&1) || true
	grep -q "^Usage" <<<"$usage" || {
		echo "check-go-install: $name -h printed no usage:" >&2
		echo "$usage" >&2
		exit 1
	}
	echo "check-go-install: ok: $name@$VERSION installs from a clean GOPATH and prints its usage"
done
