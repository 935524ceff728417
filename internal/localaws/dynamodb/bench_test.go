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
