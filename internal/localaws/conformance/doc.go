// Package conformance holds end-to-end tests of the local AWS stack's
// cross-service semantics: DynamoDB streams, Lambda event source mappings,
// IAM, SQS and TTL working together as AWS documents them, driven only
// through the aws-sdk-go-v2 clients and a real deployed function
// (testdata/fn) that records what it receives into an SQS queue.
//
// The package's only code is the Report the function sends (report.go);
// see its tests and benchmarks.
package conformance
