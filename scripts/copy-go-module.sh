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
