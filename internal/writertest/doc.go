// Package writertest tests the writer module (outbox/) against the local
// AWS stack's DynamoDB: its updates, conditions and pending index as a real
// engine applies them.
//
// These tests live in the root module, not beside the code they test, so
// that the writer module requires nothing of the local stack: an
// application importing outbox downloads only the AWS SDK and ulid.
package writertest
