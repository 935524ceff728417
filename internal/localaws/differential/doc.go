// Package differential holds the local stack's differential tests: each
// scenario makes the same sequence of aws-sdk-go-v2 calls against the local
// stack (internal/localaws, as cmd/localaws serves it) and against moto's
// moto_server, an AWS emulator written independently, and compares the
// responses field by field after normalising ids, account ids, timestamps
// and request ids.
//
// Every difference fails the suite unless the difference table
// (testdata/decisions.yaml, rendered into docs/localaws-differences.md) decides
// it: moto wrong (with AWS's documentation cited), our stack wrong (a bug
// to fix), or unspecified (both acceptable). An entry that no longer
// matches a difference fails the suite too, so the table stays true.
//
// The suite starts moto_server itself on a free loopback port. Where
// moto_server is neither on PATH nor among pyenv's shims it says so loudly
// and skips; with CI=true its absence is a failure. See README.md.
package differential
