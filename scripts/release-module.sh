#!/usr/bin/env bash
# Produces the content of the Terraform module's own repository,
# terraform-outbox-outbox-pipeline, from modules/outbox-pipeline: the
# registries (registry.terraform.io, registry.opentofu.org) take a module
# only from a repository of that name, with semver tags at its root.
#
#   scripts/release-module.sh [-p PROVIDER_VERSION] [-t MODULE_VERSION] [--history] OUT_DIR
#
# OUT_DIR becomes a git repository holding the module at its root (*.tf,
# README.md, examples/, LICENSE when the project has one), from the
# committed tree of HEAD:
#   - by default, one commit with that content;
#   - with --history, the module's own history (git subtree split), so the
#     module repository shows every change that touched it.
# With -t, the commit is tagged vMODULE_VERSION: push it with
#   git -C OUT_DIR push <module repository> main --tags
#
# With -p, the script first checks that versions.tf's provider constraint is
# the range CONTRIBUTING.md's policy gives the provider version released
# alongside, the one the module was tested with; it fails otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

MODULE_DIR=modules/outbox-pipeline
provider_version= module_version= history= out=
while [ $# -gt 0 ]; do
	case "$1" in
	-p) provider_version=${2:?-p needs a version}; shift 2 ;;
	-t) module_version=${2:?-t needs a version}; shift 2 ;;
	--history) history=1; shift ;;
	-h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "release-module: unknown option $1" >&2; exit 2 ;;
	*) out=$1; shift ;;
	esac
done
if [ -z "$out" ]; then
	echo "usage: scripts/release-module.sh [-p PROVIDER_VERSION] [-t MODULE_VERSION] [--history] OUT_DIR" >&2
	exit 2
fi
semver='^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'
for v in "$provider_version" "$module_version"; do
	if [ -n "$v" ] && ! [[ $v =~ $semver ]]; then
		echo "release-module: $v is not a semantic version (X.Y.Z, without v)" >&2
		exit 2
	fi
done
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
	echo "release-module: $out exists and is not empty" >&2
	exit 1
fi
if [ -n "$(git status --porcelain -- "$MODULE_DIR")" ]; then
	echo "release-module: warning: $MODULE_DIR has uncommitted changes; the release holds HEAD's committed tree" >&2
fi

# The provider range is the one constraint of required_providers.outbox.
constraint=$(git show "HEAD:$MODULE_DIR/versions.tf" |
	awk '/outbox *= *{/ { in_outbox = 1 } in_outbox && /version *=/ { gsub(/.*version *= *"|".*/, ""); print; exit }')
if [ -z "$constraint" ]; then
	echo "release-module: $MODULE_DIR/versions.tf has no version constraint for the outbox provider" >&2
	exit 1
fi
# The policy's range for a provider version: "~> 0.MINOR.0" before 1.0 (a
# minor release may break), "~> MAJOR.MINOR" from 1.0 (only a major may).
policy_range() {
	local major minor
	IFS=. read -r major minor _ <<<"$1"
	if [ "$major" = 0 ]; then echo "~> 0.$minor.0"; else echo "~> $major.$minor"; fi
}
# README and examples state the same range. Each file is read whole before
# grep looks at it: with pipefail, `git show | grep -q` fails at random when
# grep exits on the first match while git show is still writing (SIGPIPE).
if ! grep -qF "\`$constraint\`" <<<"$(git show "HEAD:$MODULE_DIR/README.md")"; then
	echo "release-module: $MODULE_DIR/README.md does not state the provider range $constraint (run go run ./tools/tfdocs $MODULE_DIR and update its Versions section)" >&2
	exit 1
fi
for example in $(git ls-tree -r --name-only HEAD "$MODULE_DIR/examples" | grep '\.tf$'); do
	text=$(git show "HEAD:$example")
	if grep -q 'source *= *"outboxkit/outbox"' <<<"$text" &&
		! grep -qF "version = \"$constraint\"" <<<"$text"; then
		echo "release-module: $example does not require the provider range $constraint" >&2
		exit 1
	fi
done
if [ -n "$provider_version" ]; then
	want=$(policy_range "$provider_version")
	if [ "$constraint" != "$want" ]; then
		echo "release-module: $MODULE_DIR/versions.tf requires the outbox provider \"$constraint\", but this release is tested with provider $provider_version: set it to \"$want\" there and in the README's Requirements, and commit" >&2
		exit 1
	fi
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
git -C "$out" init -q -b main

if [ -n "$history" ]; then
	# The module's history, rewritten to have the module at its root.
	split=$(git subtree split -q --prefix="$MODULE_DIR" HEAD)
	git -C "$out" fetch -q "$PWD" "$split"
	git -C "$out" reset -q --hard FETCH_HEAD
else
	git archive --format=tar "HEAD:$MODULE_DIR" | tar -x -C "$out"
fi
if git cat-file -e HEAD:LICENSE 2>/dev/null && [ ! -e "$out/LICENSE" ]; then
	git show HEAD:LICENSE >"$out/LICENSE"
fi

src=$(git rev-parse --short HEAD)
git -C "$out" add -A
if ! git -C "$out" diff --cached --quiet || [ -z "$history" ]; then
	git -C "$out" -c user.name="outboxkit release" -c user.email="release@outboxkit.invalid" \
		commit -q --allow-empty -m "outbox-pipeline from terraform-provider-outbox $src" \
		-m "The module's content at $src, with the outbox provider $constraint."
fi
if [ -n "$module_version" ]; then
	git -C "$out" -c user.name="outboxkit release" -c user.email="release@outboxkit.invalid" \
		tag -a "v$module_version" -m "outbox-pipeline v$module_version (outbox provider $constraint)"
fi
echo "release-module: $out holds the module at its root (from $src; provider $constraint)${module_version:+, tagged v$module_version}"
