// Package iamdifferential holds the differential test of the local stack's
// IAM decisions: every policy the provider writes (internal/provision's
// and internal/subscription's policy builders), evaluated for the requests
// each component makes and must not make, and a matrix of every condition
// operator in its plain, IfExists, ForAnyValue: and ForAllValues: forms,
// are decided by the stack's evaluator (internal/localaws/iampolicy, a
// function call) and by @cloud-copilot/iam-simulate, an independent IAM
// policy simulator (one Node process for every case, JSON in and out).
// Where the stack's services name the resource of a request (a log stream,
// a DynamoDB stream), the stack's own handler names it, so that a wrong
// resource shows as a wrong decision.
//
// Every decision must equal iam-simulate's, unless the test's decided
// table records the difference with its reason; an entry that no longer
// matches a difference fails the test too.
//
// iam-simulate is installed, pinned, by `make clients`
// (scripts/install-clients.sh runs npm ci in js/). Without node or the
// package the test fails and says so. `make test-iamdifferential` runs it.
package iamdifferential
