// Package clients tests the local AWS stack with clients this project did
// not write, in the languages its users write: Debian's AWS CLI (2.9) and
// boto3 (1.26), which speak the awsQuery protocol to SQS and CloudWatch, and
// the AWS SDK for JavaScript v3 with TypeScript. The tests start
// cmd/localaws, deploy a pipeline on it with the provider's orchestration
// package and the real relay, and run:
//
//   - a consumer round trip in Python, JavaScript and shell
//     (python/, js/, sh/): create a queue, subscribe it to the bus with a
//     rule, write an outbox item with TransactWriteItems as the record
//     contract guide shows, receive the documented envelope, delete it;
//   - every fenced code block of docs/guides, in its language, as written
//     (guides_test.go);
//   - S3 through the AWS CLI (sh/s3.sh): s3api calls with a checksum,
//     tagging and lifecycle rules, and `aws s3 cp` of a file that goes up
//     in a multipart upload and comes down in ranged GETs.
//
// scripts/install-clients.sh installs the clients (apt-get and npm ci of
// js/package-lock.json); `make testclients` runs it first. Without the
// clients the tests fail under CI (CI set) and skip, loudly, elsewhere.
package clients
