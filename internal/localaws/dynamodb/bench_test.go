package dynamodb_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
)

// BenchmarkTransactWriteItems measures outbox-shaped transactions through
// the SDK: a business item and its outbox record, with a stream on.
func BenchmarkTransactWriteItems(b *testing.B) {
	e := newEnv(b, localddb.Options{})
	e.createTable(b, "outbox", "NEW_AND_OLD_IMAGES")
	i := 0
	start := time.Now()
	for b.Loop() {
		i++
		id := strconv.Itoa(i)
		_, err := e.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{"PK": s("ORDER#" + id), "SK": s("ORDER"), "total": n("42")},
				ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			{Put: &types.Put{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{"PK": s("ORDER#" + id), "SK": s("OUTBOX#" + id),
				"GSI1PK": s("PENDING#" + strconv.Itoa(i%4)), "GSI1SK": s(id), "payload": s(`{"type":"OrderPlaced"}`)}}},
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(i)/time.Since(start).Seconds(), "tx/s")
}

// BenchmarkSweepTTLLiveItems measures one TTL sweep of a table holding
// 20,000 items that carry the TTL attribute and none of which has expired:
// a sweep should cost nothing like a pass over the table.
func BenchmarkSweepTTLLiveItems(b *testing.B) {
	const live = 20000
	e := newEnv(b, localddb.Options{TTLSweepInterval: -1})
	e.createTable(b, "sessions", "NEW_AND_OLD_IMAGES")
	if _, err := e.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("sessions"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)}}); err != nil {
		b.Fatal(err)
	}
	later := strconv.FormatInt(time.Now().Add(24*time.Hour).Unix(), 10)
	for i := 0; i < live; i += 25 {
		var reqs []types.WriteRequest
		for j := i; j < i+25; j++ {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				"PK": s("SESSION#" + strconv.Itoa(j)), "SK": s("x"), "expiresAt": n(later), "payload": s(`{"user":"u"}`)}}})
		}
		if _, err := e.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"sessions": reqs}}); err != nil {
			b.Fatal(err)
		}
	}
	sweeps := 0
	start := time.Now()
	for b.Loop() {
		e.svc.SweepTTL()
		sweeps++
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(sweeps), "us/sweep")
	b.ReportMetric(live, "live-items")
}
