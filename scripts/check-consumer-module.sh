#!/usr/bin/env bash
# Proves that a consumer built with the kit (consumer/) downloads and builds
# nothing of Terraform, the local stack, minidyn or the writer: the module
# builds and vets on its own (go.work would hide an import of the root
# module), and the code it builds, with its tests, comes only from the kit,
# the AWS SDK for Go v2 (with smithy-go, the SDK's runtime), aws-lambda-go
# and the OpenTelemetry tracing API (otel's propagation, otel/trace and
# xxhash, which they import), through which the kit continues each event's
# trace.
#
# go list -m all also names modules that aws-lambda-go's go.mod requires for
# its own tests (testify and what it requires); the go command reads their
# go.mod and never builds their code, which the second check shows.
set -euo pipefail
cd "$(dirname "$0")/../consumer"
export GOWORK=off GOFLAGS=-mod=readonly

go vet ./...
allowed='^(github\.com/outboxkit/terraform-provider-outbox/consumer|github\.com/aws/aws-sdk-go-v2(/.*)?|github\.com/aws/smithy-go|github\.com/aws/aws-lambda-go|go\.opentelemetry\.io/otel(/trace)?|github\.com/cespare/xxhash/v2)$'
built=$(go list -deps -test -f '{{with .Module}}{{.Path}}{{end}}' ./... | sort -u)
if bad=$(grep -Ev "$allowed" <<<"$built"); then
	echo "check-consumer-module: the kit builds code of modules beyond the AWS SDK, aws-lambda-go and the OpenTelemetry tracing API:" >&2
	echo "$bad" >&2
	exit 1
fi
if grep -q '^github\.com/outboxkit/terraform-provider-outbox\(/outbox\)\?$' <<<"$(go list -m all)"; then
	echo "check-consumer-module: the kit requires the root module or the writer" >&2
	exit 1
fi
echo "check-consumer-module: ok: $(wc -l <<<"$built") modules built:" $built
