#!/usr/bin/env bash
# S3 through the AWS CLI (Debian's 2.9): s3api calls with a checksum,
# tagging and lifecycle rules, and `aws s3 cp` of a file large enough for a
# multipart upload and ranged downloads.
set -euo pipefail
aws() { "${AWS_CLI:-aws}" --endpoint-url "$AWS_ENDPOINT_URL" --output text "$@"; }
fail() { echo "s3: $*" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

aws s3api create-bucket --bucket cli-claims >/dev/null
printf '{"invoice":42}' >"$dir/claim.json"
sum=$(openssl dgst -sha256 -binary "$dir/claim.json" | base64)
aws s3api put-object --bucket cli-claims --key claims/1.json --body "$dir/claim.json" \
	--checksum-sha256 "$sum" --tagging state=uncommitted >/dev/null
[ "$(aws s3api head-object --bucket cli-claims --key claims/1.json --checksum-mode ENABLED --query ChecksumSHA256)" = "$sum" ] || fail "checksum"
[ "$(aws s3api get-object-tagging --bucket cli-claims --key claims/1.json --query 'TagSet[0].Value')" = uncommitted ] || fail "tagging"
aws s3api put-bucket-lifecycle-configuration --bucket cli-claims --lifecycle-configuration \
	'{"Rules":[{"ID":"uncommitted","Status":"Enabled","Filter":{"Tag":{"Key":"state","Value":"uncommitted"}},"Expiration":{"Days":1}}]}'
[ "$(aws s3api get-bucket-lifecycle-configuration --bucket cli-claims --query 'Rules[0].Expiration.Days')" = 1 ] || fail "lifecycle"
head -c 9000000 /dev/urandom >"$dir/big"
aws s3 cp --only-show-errors "$dir/big" s3://cli-claims/big
aws s3 cp --only-show-errors s3://cli-claims/big "$dir/big.back"
cmp -s "$dir/big" "$dir/big.back" || fail "the large object came back different"
[ "$(aws s3 ls s3://cli-claims/ --recursive | wc -l)" = 2 ] || fail "listing"
if out=$(aws s3api head-object --bucket cli-claims --key missing 2>&1); then fail "head-object of a missing key succeeded"; fi
grep -q '(404)' <<<"$out" || fail "missing key: $out"
aws s3 rm --only-show-errors --recursive s3://cli-claims/
aws s3api delete-bucket --bucket cli-claims
echo "s3 ok"
