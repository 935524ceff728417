package dynamodb_test

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
)

// TestUpdatedValuesNameOnlyTargets: UPDATED_NEW and UPDATED_OLD return the
// attributes the update expression acts on, never an untouched string set
// (the engine, comparing item images, listed one on about one update in
// ten after a DELETE from the set). Many items, so that the fault shows.
func TestUpdatedValuesNameOnlyTargets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{TTLSweepInterval: -1})
	e.createTable(t, "updated-values", "")
	for i := range 60 {
		key := map[string]types.AttributeValue{"PK": s(fmt.Sprint(i)), "SK": s("s")}
		updates := []struct {
			expr   string
			values map[string]types.AttributeValue
		}{
			{"SET tags = :t, c = :one", map[string]types.AttributeValue{":t": &types.AttributeValueMemberSS{Value: []string{"a", "b", "c", "d", "e"}}, ":one": n("1")}},
			{"DELETE tags :b", map[string]types.AttributeValue{":b": &types.AttributeValueMemberSS{Value: []string{"b"}}}},
		}
		for _, u := range updates {
			if _, err := e.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("updated-values"), Key: key,
				UpdateExpression: aws.String(u.expr), ExpressionAttributeValues: u.values}); err != nil {
				t.Fatal(err)
			}
		}
		for _, rv := range []types.ReturnValue{types.ReturnValueUpdatedNew, types.ReturnValueUpdatedOld} {
			out, err := e.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("updated-values"), Key: key,
				UpdateExpression: aws.String("SET c = c + :one"), ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1")}, ReturnValues: rv})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := out.Attributes["c"]; !ok || len(out.Attributes) != 1 {
				t.Fatalf("item %d, %s: attributes %v, want only c", i, rv, out.Attributes)
			}
		}
	}
}
