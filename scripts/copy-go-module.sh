# Sourced by the scripts that build a CLI from its Go module: copy_go_module
# MODULE VERSION DEST (the script's own arguments after MODULE) sets
# $version (VERSION without a leading v) and $dest, downloads
# MODULE@v$version from the module proxy and copies it to "$work/src",
# writable, with $work a temporary directory removed on exit. `go install`
# refuses such modules (replace directives, nested modules absent from the
# zip), so they are built from the copy.
copy_go_module() {
	local module=$1 dir
	version=${2:?usage: $0 VERSION DEST}
	dest=${3:?usage: $0 VERSION DEST}
	version=${version#v}
	dir=$(go mod download -json "${module}@v${version}" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ -z "$dir" ] || [ ! -d "$dir" ]; then
		echo "$0: downloading ${module}@v${version} failed" >&2
		exit 1
	fi
	work=$(mktemp -d)
	trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
	cp -R "$dir/." "$work/src"
	chmod -R u+w "$work/src"
}

# drop_state_backends MODULE: in "$work/src", the copy of MODULE (Terraform
# or OpenTofu), drops every remote-state backend but http and inmem from
# internal/backend/init/init.go: its import and the lines that use its
# alias. The CLI then builds without the cloud SDKs those backends bring in
# (Azure, Google Cloud, Kubernetes, Alibaba, Tencent, Consul, Postgres, S3),
# about a third of its compile time; the tests keep their state locally.
# Sets $dropped to the backends' names.
drop_state_backends() {
	local module=$1 init="$work/src/internal/backend/init/init.go" pkg alias
	dropped=()
	while read -r pkg; do
		case ${pkg##*/} in http | inmem) continue ;; esac
		alias=$(sed -n "s#^[[:space:]]*\([A-Za-z0-9_]\{1,\}\)[[:space:]]\{1,\}\"${pkg}\"\$#\1#p" "$init")
		if [ -z "$alias" ]; then
			echo "$0: $init imports $pkg without an alias: drop_state_backends cannot drop it" >&2
			exit 1
		fi
		grep -v -F "\"${pkg}\"" "$init" | grep -v -E "(^|[^A-Za-z0-9_])${alias}\." >"$init.new"
		mv "$init.new" "$init"
		dropped+=("${pkg##*/}")
	done < <(sed -n "s#^[[:space:]]*[A-Za-z0-9_]*[[:space:]]*\"\(${module}/internal/backend/remote-state/[^\"]*\)\"\$#\1#p" "$init")
}
