#!/usr/bin/env bash
# Builds a Terraform CLI of v1.9 or later from the Go module proxy into a
# project-local path, for running the acceptance tests with it.
#
#   scripts/install-terraform.sh VERSION DEST
#
# From v1.9, `go install github.com/hashicorp/terraform@VERSION` fails: the
# module zip omits the nested modules (the remote-state backends and
# internal/legacy). So the module is downloaded and copied somewhere
# writable; the nested modules' require and replace lines are dropped from
# go.mod, their imports and map entries from internal/backend/init/init.go,
# and a `godebug tlskyber` line if present; then it is built in module mode.
# The result lacks only the cloud state backends, which tests do not use.
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
	init=internal/backend/init/init.go
	alias=$(sed -n "s#^[[:space:]]*\([A-Za-z0-9_]*\)[[:space:]]*\"${m}\"#\1#p" "$init")
	if [ -n "$alias" ]; then
		grep -v -F "\"${m}\"" "$init" | grep -v -E "[^A-Za-z0-9_]${alias}\." >"$init.new"
		mv "$init.new" "$init"
	fi
done
sed -i '/^godebug[[:space:]]*tlskyber/d' go.mod
# A godebug block holding only tlskyber.
sed -i '/^godebug (/,/^)/{/tlskyber/d}' go.mod

mkdir -p "$(dirname "$dest")"
echo "building Terraform ${version} into ${dest} (without the nested modules: ${nested[*]})"
CGO_ENABLED=0 GOFLAGS= go build -mod=mod -trimpath \
	-ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" \
	-o "$work/terraform" .
mv "$work/terraform" "$dest"
CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null "$dest" version
