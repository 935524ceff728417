// Package consumertest tests the consumer kit (consumer/) against the local
// AWS stack's DynamoDB: its conditional puts, leases, payload checks and
// completing transactions as a real engine applies them, under concurrent
// duplicate delivery, and its adapters on the event shapes the writer
// module (outbox/) publishes.
//
// These tests live in the root module, not beside the code they test, so
// that the kit requires nothing of the local stack.
package consumertest
