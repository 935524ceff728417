package localawstest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestCloseIsQuickAfterParallelCalls makes parallel calls through an SDK
// client built from Config, so its transport holds idle connections (some
// dialed but never used), and times the stack's cleanup: the server's
// Shutdown waits up to 5 s for such connections unless they are closed.
func TestCloseIsQuickAfterParallelCalls(t *testing.T) {
	t.Parallel()
	var begin time.Time
	var elapsed time.Duration
	t.Run("stack", func(t *testing.T) {
		// Cleanups run last in, first out: begin, the stack's, then end.
		t.Cleanup(func() { elapsed = time.Since(begin) })
		stack := localawstest.StartDynamoDB(t)
		db := dynamodb.NewFromConfig(localawstest.Config(stack), func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
		for range 3 {
			var wg sync.WaitGroup
			for range 32 {
				wg.Go(func() {
					if _, err := db.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		t.Cleanup(func() { begin = time.Now() })
	})
	t.Logf("stack cleanup took %v", elapsed)
	if elapsed > time.Second {
		t.Errorf("stack cleanup took %v, want under 1s", elapsed)
	}
}
