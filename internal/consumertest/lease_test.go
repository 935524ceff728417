package consumertest_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

// The kit's default lease keeps the rule of the lease and the queue (the
// function's timeout < the lease < (maxReceiveCount - 1) x the visibility
// timeout) with a subscription's default queue, for every function that
// queue can serve: Lambda requires the function's timeout to be at most
// the visibility timeout.
func TestDefaultLeaseFitsTheDefaultQueue(t *testing.T) {
	t.Parallel()
	visibility := time.Duration(subscription.DefaultVisibilityTimeoutSeconds) * time.Second
	bound := time.Duration(subscription.DefaultMaxReceiveCount-1) * visibility
	if consumer.DefaultLease <= visibility || consumer.DefaultLease >= bound {
		t.Errorf("DefaultLease %s, want above the longest function timeout %s and below (maxReceiveCount - 1) x visibility = %s",
			consumer.DefaultLease, visibility, bound)
	}
}

// The kit's godoc, the inbox contract guide and examples/consumer-lambda
// state the one rule of the lease and the queue, and the guide documents
// the log records of a payload mismatch (TestPayloadMismatchLogRecords).
func TestDocsStateTheKitsRules(t *testing.T) {
	t.Parallel()
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// One line per paragraph, whatever the wrapping and comment markers.
		return strings.Join(strings.Fields(strings.ReplaceAll(string(b), "// ", "")), " ")
	}
	rule := map[string][]string{
		"../../consumer/doc.go":                         {"the function's timeout < the lease", "< (maxReceiveCount - 1) x the queue's visibility timeout"},
		"../../templates/guides/inbox-contract.md.tmpl": {"the function's timeout < the lease < (`maxReceiveCount` − 1) × the queue's visibility timeout"},
		"../../examples/consumer-lambda/README.md":      {"the function's timeout < the lease < (`max_receive_count` − 1) × `visibility_timeout_seconds`"},
	}
	for path, want := range rule {
		text := read(path)
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s does not state %q", path, w)
			}
		}
	}
	guide := read("../../templates/guides/inbox-contract.md.tmpl")
	for _, w := range []string{"`payload mismatch`", "`storedHash`", "`deliveredHash`", "`delivery failed`", "`deliveryId`"} {
		if !strings.Contains(guide, w) {
			t.Errorf("the inbox contract guide does not document the payload mismatch's %s", w)
		}
	}
}
