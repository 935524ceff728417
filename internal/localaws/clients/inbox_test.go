package clients

import (
	"context"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
)

// inboxGuideData is the data every example of the inbox guide applies, in
// Go's spelling; the TypeScript and Python ones write it their own way.
const inboxGuideData = `{"orderId":"1234","total":42.5,"lines":[{"sku":"é-1","qty":1.0}],"fee":1e21}`

var inboxLineRE = regexp.MustCompile(`(?m)^inbox (applied|duplicate|mismatch) (\S+)$`)

// checkInboxGuide: each example (Go once, TypeScript in CommonJS and in
// ESM, Python once) applied its event, skipped the redelivery and refused
// the other payload; every inbox entry holds the hash the Go kit computes
// for the same data, its effect is in the ledger, and the Go kit sees the
// other languages' events as duplicates: they share one inbox.
func checkInboxGuide(t *testing.T, db *dynamodb.Client, out string) {
	t.Helper()
	ids := map[string][]string{}
	for _, m := range inboxLineRE.FindAllStringSubmatch(out, -1) {
		ids[m[1]] = append(ids[m[1]], m[2])
	}
	for _, what := range []string{"applied", "duplicate", "mismatch"} {
		if len(ids[what]) != 4 {
			t.Fatalf("the examples printed %d %q lines, want 4:\n%s", len(ids[what]), what, out)
		}
	}
	hash, err := consumer.PayloadHash([]byte(inboxGuideData))
	if err != nil {
		t.Fatal(err)
	}
	inbox, err := consumer.NewInbox(db, "billing-inbox")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range ids["applied"] {
		entry := getItem(t, db, "billing-inbox", consumer.AttrEventID, id)
		if got := entry[consumer.AttrPayloadHash]; !sameString(got, hash) || !sameString(entry[consumer.AttrStatus], consumer.StatusCompleted) {
			t.Errorf("inbox entry of %s: %v, want COMPLETED with payload hash %s", id, entry, hash)
		}
		if len(getItem(t, db, "billing-ledger", "pk", "LEDGER#"+id)) == 0 {
			t.Errorf("the ledger has no line for %s", id)
		}
		outcome, err := inbox.Process(ctx, id, hash, func(context.Context, *consumer.Tx) error {
			t.Errorf("the Go kit ran the handler of %s, which another example applied", id)
			return nil
		})
		if err != nil || outcome != consumer.Duplicate {
			t.Errorf("the Go kit on %s: %v, %v; want a duplicate", id, outcome, err)
		}
	}
}

func getItem(t *testing.T, db *dynamodb.Client, table, key, value string) map[string]types.AttributeValue {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{key: &types.AttributeValueMemberS{Value: value}}})
	if err != nil {
		t.Fatalf("reading %s from %s: %v", value, table, err)
	}
	return out.Item
}

func sameString(v types.AttributeValue, want string) bool {
	s, ok := v.(*types.AttributeValueMemberS)
	return ok && s.Value == want
}
