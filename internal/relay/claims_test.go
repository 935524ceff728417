package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestReconcileSweepsClaims: with OUTBOX_CLAIM_BUCKET, a reconcile run
// sweeps the bucket afterwards: the object of a transaction that never
// committed is removed, the committed one kept, and the report and the log
// count both.
func TestReconcileSweepsClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rc, err := config.FromEnv(func(k string) string {
		return map[string]string{config.EnvTableName: "orders-outbox", config.EnvClaimBucket: "orders-claims", config.EnvClaimSweepWindow: "1h"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, objects, ddb := relaytest.ClaimCheckStack(ctx, t, "orders-claims", rc.Table)
	event := outbox.Event{Source: "com.example.files", DetailType: "FileStored",
		Detail: json.RawMessage(`{"blob":"` + strings.Repeat("x", outbox.MaxEntryBytes) + `"}`)}
	for _, client := range []outbox.TransactWriter{ddb, relaytest.CancelledTransactions{Client: ddb}} {
		w, err := outbox.NewWriter(client, rc.Table, outbox.WithClaimCheck(objects, "orders-claims"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(ctx, nil, event) // the cancelled one fails, its object stays
	}
	var logs bytes.Buffer
	// Twenty minutes on, both objects are past the sweep's grace period.
	later := func() time.Time { return time.Now().Add(20 * time.Minute) }
	r, err := relay.New(rc, relay.Clients{DynamoDB: ddb, AWS: cfg, S3: objects}, relay.Options{Log: newLogger(&logs), Now: later})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Reconcile(ctx, relay.ReconcileRequest{Action: relay.ActionReconcile, MinAgeSeconds: aws.Float64(3600)})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Claims; c == nil || c.Examined != 2 || c.Removed != 1 || c.Kept != 1 || c.Error != "" {
		t.Fatalf("claims report = %+v, want 2 examined, 1 removed, 1 kept", c)
	}
	if !strings.Contains(logs.String(), `"msg":"claim sweep finished"`) || !strings.Contains(logs.String(), `"removed":1`) {
		t.Errorf("the log does not count the sweep:\n%s", logs.String())
	}
	list, err := objects.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("orders-claims")})
	if err != nil || len(list.Contents) != 1 {
		t.Errorf("objects left: %d (%v), want the committed one", len(list.Contents), err)
	}
}
