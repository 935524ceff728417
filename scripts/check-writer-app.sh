#!/usr/bin/env bash
# Proves that an application importing the writer module downloads and builds
# nothing of Terraform, the local stack or minidyn: the module graph of
# examples/writer-app holds only the writer module, the AWS SDK for Go v2
# (with smithy-go, the SDK's runtime), ulid, and the OpenTelemetry API through
# which the writer reads the caller's trace context (go.opentelemetry.io/otel
# and otel/trace, with xxhash, which they import).
#
# More modules appear in that graph without being built, which the second
# check below shows: github.com/pborman/getopt, which ulid's go.mod requires
# for its ulid command (ulid's go.mod predates module graph pruning, go 1.15,
# so the go command lists that requirement), the OpenTelemetry modules the
# writer's packages do not import (otel/metric, auto/sdk, go-logr), and the
# test libraries their go.mod files require (testify with go-spew,
# go-difflib and yaml.v3, go-cmp, kr/text).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off GOFLAGS=-mod=readonly

# The writer module builds, with its tests, on its own: no import reaches
# into the root module (go.work would hide that).
(cd outbox && go vet ./...)

cd examples/writer-app

allowed='^(github\.com/outboxkit/terraform-provider-outbox/(examples/writer-app|outbox)|github\.com/aws/aws-sdk-go-v2(/.*)?|github\.com/aws/smithy-go|github\.com/oklog/ulid/v2|go\.opentelemetry\.io/otel(/trace)?|github\.com/cespare/xxhash/v2)$'
listed_only='^(github\.com/pborman/getopt|go\.opentelemetry\.io/(otel/metric|auto/sdk)|github\.com/go-logr/(logr|stdr)|github\.com/stretchr/testify|github\.com/davecgh/go-spew|github\.com/pmezard/go-difflib|gopkg\.in/yaml\.v3|github\.com/google/go-cmp|github\.com/kr/text)$'

graph=$(go list -m -f '{{.Path}}' all)
if bad=$(grep -Ev "$allowed|$listed_only" <<<"$graph"); then
	echo "check-writer-app: go list -m all holds modules an application of the writer must not need:" >&2
	echo "$bad" >&2
	exit 1
fi
built=$(go list -deps -test -f '{{with .Module}}{{.Path}}{{end}}' ./... | sort -u)
if bad=$(grep -Ev "$allowed" <<<"$built"); then
	echo "check-writer-app: the application builds code of modules beyond the SDK, ulid and the OpenTelemetry API:" >&2
	echo "$bad" >&2
	exit 1
fi
go vet ./...
go build -o /dev/null .
echo "check-writer-app: ok: $(wc -l <<<"$graph") modules in the graph, $(wc -l <<<"$built") built:" $built
