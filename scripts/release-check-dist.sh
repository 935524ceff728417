#!/usr/bin/env bash
# Checks the provider release in dist/ (goreleaser release --snapshot or a
# real release) against what the Terraform and OpenTofu registries require:
#   - one zip per platform, named terraform-provider-outbox_<V>_<os>_<arch>.zip,
#     holding terraform-provider-outbox_v<V> (.exe on Windows);
#   - terraform-provider-outbox_<V>_SHA256SUMS listing every zip and the
#     manifest (as terraform-provider-outbox_<V>_manifest.json) with their
#     true SHA-256;
#   - the signature terraform-provider-outbox_<V>_SHA256SUMS.sig: absent in a
#     snapshot, present and valid (gpg --verify) otherwise;
#   - the manifest declaring protocol version 6.0;
#   - every binary embedding both relay packages, byte for byte, and the
#     linux/amd64 binary printing <V> and their CodeSha256 with -version.
#
#   scripts/release-check-dist.sh [DIST_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=${1:-dist}
PROJECT=terraform-provider-outbox
PLATFORMS=${PLATFORMS:-"linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64 windows_arm64"}
RELAY_ZIPS="internal/relaypackage/dist/relay_arm64.zip internal/relaypackage/dist/relay_x86_64.zip"

fail() {
	echo "release-check-dist: $*" >&2
	exit 1
}

[ -f "$DIST/metadata.json" ] || fail "$DIST/metadata.json is missing: run goreleaser first"
read -r version snapshot < <(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
print(m["version"], "snapshot" if "SNAPSHOT" in m["version"] else "release")' "$DIST/metadata.json")

# The manifest.
python3 -c '
import json, sys
m = json.load(open("terraform-registry-manifest.json"))
assert m["version"] == 1 and m["metadata"]["protocol_versions"] == ["6.0"], m' ||
	fail "terraform-registry-manifest.json must declare version 1 and protocol_versions [\"6.0\"]"

# SHA256SUMS: every zip and the manifest, with their true sums.
sums=$DIST/${PROJECT}_${version}_SHA256SUMS
[ -f "$sums" ] || fail "$sums is missing"
want_names=$(for p in $PLATFORMS; do echo "${PROJECT}_${version}_${p}.zip"; done
	echo "${PROJECT}_${version}_manifest.json")
listed=$(awk '{ print $2 }' "$sums" | sort)
missing=$(comm -23 <(sort <<<"$want_names") <(echo "$listed"))
[ -z "$missing" ] || fail "$sums does not list: $missing"
# The signature signs SHA256SUMS, so SHA256SUMS must not list it (goreleaser
# does, after signing, unless checksum.ids leaves signatures out).
if grep -q '\.sig$' <<<"$listed"; then
	fail "$sums lists a signature, so the signature cannot verify it: set checksum.ids in .goreleaser.yml"
fi
manifest_sum=$(sha256sum terraform-registry-manifest.json | awk '{ print $1 }')
while read -r sum name; do
	if [ "$name" = "${PROJECT}_${version}_manifest.json" ]; then
		[ "$sum" = "$manifest_sum" ] || fail "$name: SHA256SUMS says $sum, terraform-registry-manifest.json is $manifest_sum"
		continue
	fi
	[ -f "$DIST/$name" ] || fail "$sums lists $name, which is not in $DIST"
	actual=$(sha256sum "$DIST/$name" | awk '{ print $1 }')
	[ "$sum" = "$actual" ] || fail "$name: SHA256SUMS says $sum, the file is $actual"
done <"$sums"

# The signature.
sig=$sums.sig
if [ "$snapshot" = snapshot ]; then
	[ ! -e "$sig" ] || fail "a snapshot must not be signed, but $sig exists"
else
	[ -f "$sig" ] || fail "$sig is missing: the registry rejects an unsigned release"
	gpg --batch --verify "$sig" "$sums" || fail "$sig does not verify $sums"
fi

# The binaries: names, embedded relay packages, -version.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for p in $PLATFORMS; do
	zip=$DIST/${PROJECT}_${version}_${p}.zip
	bin=${PROJECT}_v${version}
	[[ $p == windows_* ]] && bin=$bin.exe
	mkdir -p "$work/$p"
	unzip -q "$zip" -d "$work/$p"
	[ -f "$work/$p/$bin" ] || fail "$zip does not hold $bin: $(unzip -Z1 "$zip" | tr '\n' ' ')"
	python3 - "$work/$p/$bin" $RELAY_ZIPS <<-'EOF' || fail "$zip: $bin does not embed the relay packages built in internal/relaypackage/dist"
		import sys
		binary = open(sys.argv[1], "rb").read()
		for z in sys.argv[2:]:
		    if open(z, "rb").read() not in binary:
		        sys.exit(f"{z} is not embedded")
	EOF
	echo "release-check-dist: $p: $bin ($(stat -c %s "$work/$p/$bin") bytes) embeds both relay packages"
done

# The outbox operations command: its own zip per platform, listed in
# SHA256SUMS, and a binary that answers --help.
for p in $PLATFORMS; do
	zip=$DIST/outbox_${version}_${p}.zip
	bin=outbox
	[[ $p == windows_* ]] && bin=$bin.exe
	[ -f "$zip" ] || fail "$zip is missing"
	grep -q " outbox_${version}_${p}.zip$" "$sums" || fail "$sums does not list $(basename "$zip")"
	grep -qx "$bin" <<<"$(unzip -Z1 "$zip")" || fail "$zip does not hold $bin: $(unzip -Z1 "$zip" | tr '\n' ' ')"
done
unzip -q "$DIST/outbox_${version}_linux_amd64.zip" -d "$work/outbox"
grep -q "redrive" <<<"$("$work/outbox/outbox" --help 2>&1)" || fail "outbox --help of the linux/amd64 binary does not list its subcommands"

out=$("$work/linux_amd64/${PROJECT}_v${version}" -version) || fail "-version of the linux/amd64 binary failed: $out"
head -1 <<<"$out" | grep -q "^$PROJECT $version " || fail "-version prints $(head -1 <<<"$out"), want $PROJECT $version"
for z in $RELAY_ZIPS; do
	arch=$(basename "$z" .zip)
	arch=${arch#relay_}
	code_sha=$(openssl dgst -sha256 -binary "$z" | base64)
	grep -qx "relay $arch CodeSha256 $code_sha" <<<"$out" || fail "-version does not report relay $arch CodeSha256 $code_sha:
$out"
done
echo "release-check-dist: ok: $version ($snapshot), $(wc -w <<<"$PLATFORMS") platforms, SHA256SUMS and manifest match; -version:"
sed 's/^/  /' <<<"$out"
