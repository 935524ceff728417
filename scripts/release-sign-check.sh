#!/usr/bin/env bash
# Rehearses a signed release, which the snapshot of make release-check skips:
# a clone of HEAD tagged v$VERSION, a throwaway GPG key, `goreleaser release`
# with nothing published, then scripts/release-check-dist.sh, which verifies
# the SHA256SUMS signature with gpg as the registry does.
#
#   scripts/release-sign-check.sh [GORELEASER]    # default bin/goreleaser
set -euo pipefail
cd "$(dirname "$0")/.."
GORELEASER=$(realpath "${1:-bin/goreleaser}")
VERSION=${VERSION:-0.0.0-rehearsal}
work=$(mktemp -d)
trap 'gpgconf --kill gpg-agent >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git clone -q . "$work/repo"
# The relay packages are build output: the before hook builds them.
export GNUPGHOME=$work/gnupg
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key "outbox release rehearsal <rehearsal@outboxkit.invalid>" ed25519 sign 1d
fingerprint=$(gpg --list-secret-keys --with-colons | awk -F: '/^fpr/ { print $10; exit }')
cd "$work/repo"
git -c user.name=rehearsal -c user.email=rehearsal@outboxkit.invalid tag -a "v$VERSION" -m "rehearsal"
GPG_FINGERPRINT=$fingerprint GITHUB_TOKEN=unused \
	"$GORELEASER" release --clean --skip=publish,announce,validate
scripts/release-check-dist.sh dist
