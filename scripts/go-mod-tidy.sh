#!/usr/bin/env bash
# go mod tidy for the repository's three modules (root, outbox/,
# examples/writer-app/), each on its own (go mod tidy ignores go.work).
#
#   scripts/go-mod-tidy.sh          # tidy them
#   scripts/go-mod-tidy.sh -diff    # print what tidy would change; fail if anything
#
# The root module requires the writer module at a commit that no public proxy
# serves yet, so the root's tidy reads it from a file-based proxy built from
# git (tools/modproxy), as scripts/check-go-install.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT_MOD=github.com/outboxkit/terraform-provider-outbox
WRITER_MOD=$ROOT_MOD/outbox
flags=("$@")

proxy=$(mktemp -d)
trap 'rm -rf "$proxy"' EXIT
writer_version=$(awk -v m="$WRITER_MOD" '$1 == m { print $2 }' go.mod)
writer_rev=$(scripts/writer-version.sh revision "$writer_version")
go run ./tools/modproxy -out "$proxy" "$WRITER_MOD@$writer_version=$writer_rev:outbox" >/dev/null

status=0
for dir in . outbox examples/writer-app; do
	(
		cd "$dir"
		GOWORK=off GONOSUMDB="$ROOT_MOD" GOPROXY="file://$proxy,$(go env GOPROXY)" go mod tidy "${flags[@]}"
	) || { echo "go-mod-tidy: $dir is not tidy" >&2; status=1; }
done
exit $status
