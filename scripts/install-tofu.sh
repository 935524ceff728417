#!/usr/bin/env bash
# Builds the OpenTofu CLI from the Go module proxy into a project-local
# directory, for running the acceptance tests with OpenTofu.
#
#   scripts/install-tofu.sh VERSION DEST
#
# `go install github.com/opentofu/opentofu/cmd/tofu@VERSION` is refused
# because OpenTofu's go.mod has replace directives, so the module is
# downloaded, copied somewhere writable and built in module mode, without
# the remote-state backends but http and inmem (drop_state_backends in
# copy-go-module.sh: the tests keep their state locally). The release
# linker flag drops the -dev marker, so `tofu version` reports exactly
# VERSION.
set -euo pipefail

# shellcheck source=copy-go-module.sh
. "$(dirname "$0")/copy-go-module.sh"
copy_go_module github.com/opentofu/opentofu "$@"
drop_state_backends github.com/opentofu/opentofu

mkdir -p "$(dirname "$dest")"
echo "building OpenTofu ${version} into ${dest} (without the state backends ${dropped[*]})"
(
	cd "$work/src"
	CGO_ENABLED=0 GOFLAGS= go build -mod=mod -trimpath \
		-ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
		-o "$work/tofu" ./cmd/tofu
)
mv "$work/tofu" "$dest"
CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null "$dest" version
