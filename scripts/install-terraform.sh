#!/usr/bin/env bash
# Builds a Terraform CLI from the Go module proxy into a project-local path,
# for running the tests with it.
#
#   scripts/install-terraform.sh VERSION DEST
#
# The module is downloaded and copied somewhere writable, then built in
# module mode without the remote-state backends but http and inmem
# (drop_state_backends in copy-go-module.sh): the tests keep their state
# locally, and the cloud SDKs of those backends were a third of the build.
# From v1.9, `go install github.com/hashicorp/terraform@VERSION` fails
# anyway: the module zip omits the nested modules (those backends and
# internal/legacy), so their require and replace lines are dropped from
# go.mod, and a `godebug tlskyber` line if present. The proxy's version list
# stops at v1.13.3, but it serves later versions asked by name (v1.16.0).
set -euo pipefail

# shellcheck source=copy-go-module.sh
. "$(dirname "$0")/copy-go-module.sh"
copy_go_module github.com/hashicorp/terraform "$@"
cd "$work/src"

# The nested modules named by go.mod's replace directives (./internal/...),
# absent from the module zip.
mapfile -t nested < <(sed -n 's#^[[:space:]]*\(replace[[:space:]]\+\)\{0,1\}\(github.com/hashicorp/terraform/internal/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./.*#\2#p' go.mod | sort -u)
for m in "${nested[@]}"; do
	# Drop require and replace lines of the nested module.
	grep -v -E "^[[:space:]]*(require[[:space:]]+|replace[[:space:]]+)?${m//./\\.}[[:space:]]" go.mod >go.mod.new || true
	mv go.mod.new go.mod
done
drop_state_backends github.com/hashicorp/terraform
sed -i '/^godebug[[:space:]]*tlskyber/d' go.mod
# A godebug block holding only tlskyber.
sed -i '/^godebug (/,/^)/{/tlskyber/d}' go.mod

mkdir -p "$(dirname "$dest")"
echo "building Terraform ${version} into ${dest} (without the state backends ${dropped[*]}; nested modules dropped: ${nested[*]:-none})"
CGO_ENABLED=0 GOFLAGS= go build -mod=mod -trimpath \
	-ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" \
	-o "$work/terraform" .
mv "$work/terraform" "$dest"
CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null "$dest" version
