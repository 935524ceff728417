#!/usr/bin/env bash
# go mod tidy for the repository's modules (root, outbox/, consumer/,
# third_party/minidyn/, examples/writer-app/, examples/consumer-lambda/), each on its own (go mod tidy
# ignores go.work).
#
#   scripts/go-mod-tidy.sh          # tidy them
#   scripts/go-mod-tidy.sh -diff    # print what tidy would change; fail if anything
#
# The root module requires the nested modules at commits that no public
# proxy serves yet, so the root's tidy reads them from a file-based proxy
# built from git (tools/modproxy), as scripts/check-go-install.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT_MOD=github.com/outboxkit/terraform-provider-outbox
flags=("$@")

proxy=$(mktemp -d)
trap 'rm -rf "$proxy"' EXIT
mapfile -t nested < <(FROM_WORKTREE=1 scripts/module-version.sh proxy-args)
go run ./tools/modproxy -out "$proxy" "${nested[@]}" >/dev/null

status=0
for dir in . outbox consumer third_party/minidyn examples/writer-app examples/consumer-lambda; do
	(
		cd "$dir"
		GOWORK=off GONOSUMDB="$ROOT_MOD" GOPROXY="file://$proxy,$(go env GOPROXY)" go mod tidy "${flags[@]}"
	) || { echo "go-mod-tidy: $dir is not tidy" >&2; status=1; }
done
exit $status
