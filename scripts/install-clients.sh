#!/usr/bin/env bash
# Installs the clients that the local stack's client tests drive
# (internal/localaws/clients), none of them written by this project:
#   - Debian's awscli (2.9) and python3-boto3 (1.26), which speak the awsQuery
#     (XML) protocol to SQS and CloudWatch, from apt;
#   - the AWS SDK for JavaScript v3 (@aws-sdk/client-*, @aws-sdk/lib-dynamodb)
#     and TypeScript, by `npm ci` of internal/localaws/clients/js;
#   - the IAM policy simulator @cloud-copilot/iam-simulate (pinned), by
#     `npm ci` of internal/localaws/iamdifferential/js.
# Idempotent: it installs only what is missing or out of date, so running it
# again costs a second. Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

packages=()
[ -x /usr/bin/aws ] || packages+=(awscli)
/usr/bin/python3 -c 'import boto3' 2>/dev/null || packages+=(python3-boto3)
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
if [ "${#packages[@]}" -gt 0 ]; then
	echo "install-clients: apt-get install ${packages[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi

# npm keeps a copy of the lock it installed in node_modules/.package-lock.json.
for js in internal/localaws/clients/js internal/localaws/iamdifferential/js; do
	if [ ! -f "$js/node_modules/.package-lock.json" ] || [ "$js/package-lock.json" -nt "$js/node_modules/.package-lock.json" ]; then
		echo "install-clients: npm ci in $js"
		(cd "$js" && npm ci --no-audit --no-fund --loglevel=error)
	fi
done
js=internal/localaws/clients/js

echo "install-clients: $(/usr/bin/aws --version 2>&1 | cut -d' ' -f1), boto3 $(/usr/bin/python3 -c 'import boto3; print(boto3.__version__)'), node $(node --version), $(cd "$js" && node -p 'require("@aws-sdk/client-dynamodb/package.json").name + " " + require("@aws-sdk/client-dynamodb/package.json").version')"
