package claimsweep_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/claimsweep"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func large(tag string) outbox.Event {
	return outbox.Event{PartitionKey: "FILE#" + tag, Source: "com.example.files", DetailType: "FileStored",
		Detail: json.RawMessage(`{"blob":"` + strings.Repeat(tag, outbox.MaxEntryBytes) + `"}`)}
}

// TestSweepRemovesOnlyUncommittedObjects: of the objects written in the
// window, the sweep removes the one whose transaction failed, and keeps the
// one whose item exists and the one whose item was deleted after it was
// published (tagged); objects younger than the grace period are not
// examined.
func TestSweepRemovesOnlyUncommittedObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := outbox.Table{Name: "files", Layout: outbox.LayoutShared}.WithDefaults()
	_, objects, ddb := relaytest.ClaimCheckStack(ctx, t, "claims", table)
	committed, err := outbox.NewWriter(ddb, table, outbox.WithClaimCheck(objects, "claims"))
	if err != nil {
		t.Fatal(err)
	}
	failing, err := outbox.NewWriter(relaytest.CancelledTransactions{Client: ddb}, table, outbox.WithClaimCheck(objects, "claims"))
	if err != nil {
		t.Fatal(err)
	}
	kept := write(ctx, t, committed, large("a"))
	published := write(ctx, t, committed, large("b"))
	if _, err := failing.Write(ctx, nil, large("c")); err == nil {
		t.Fatal("the failing transaction committed")
	}
	tag(ctx, t, objects, published)
	if _, err := ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table.Name), Key: table.Key(published)}); err != nil {
		t.Fatal(err)
	}
	sweeper := claimsweep.Sweeper{S3: objects, Items: ddb, Table: table, Bucket: "claims"}
	if res, err := sweeper.Sweep(ctx); err != nil || res.Examined != 0 {
		t.Fatalf("a sweep within the grace period: %+v, %v", res, err)
	}
	sweeper.Now = func() time.Time { return time.Now().Add(claimsweep.DefaultGrace + time.Minute) }
	res, err := sweeper.Sweep(ctx)
	if err != nil || res != (claimsweep.Result{Examined: 3, Removed: 1, Kept: 2}) {
		t.Fatalf("sweep: %+v, %v", res, err)
	}
	left := keys(ctx, t, objects)
	if len(left) != 2 || !left[kept.DataRef.Key] || !left[published.DataRef.Key] {
		t.Errorf("left %v; want the committed and the published object", left)
	}
}

func write(ctx context.Context, t *testing.T, w *outbox.Writer, e outbox.Event) outbox.Record {
	t.Helper()
	rs, err := w.Write(ctx, nil, e)
	if err != nil {
		t.Fatal(err)
	}
	return rs[0]
}

func tag(ctx context.Context, t *testing.T, objects *s3.Client, r outbox.Record) {
	t.Helper()
	_, err := objects.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("claims"), Key: aws.String(r.DataRef.Key),
		Tagging: &s3types.Tagging{TagSet: []s3types.Tag{{Key: aws.String(outbox.ClaimStateTag), Value: aws.String(outbox.ClaimStatePublished)}}}})
	if err != nil {
		t.Fatal(err)
	}
}

func keys(ctx context.Context, t *testing.T, objects *s3.Client) map[string]bool {
	t.Helper()
	out, err := objects.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("claims")})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for _, o := range out.Contents {
		left[aws.ToString(o.Key)] = true
	}
	return left
}
