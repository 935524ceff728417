package dynamodb_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
)

// TestEmptyMapsAndListsAreReturned: an empty map or list is a value
// DynamoDB stores and returns as written ({"M":{}}, {"L":[]}), through
// every read: GetItem, Query, Scan, BatchGetItem, TransactGetItems and the
// old item a DeleteItem returns.
func TestEmptyMapsAndListsAreReturned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "empties", "")
	item := map[string]types.AttributeValue{"PK": s("a"), "SK": s("x"), "name": s("kept"),
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}, "l": &types.AttributeValueMemberL{Value: []types.AttributeValue{}}}
	if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("empties"), Item: item}); err != nil {
		t.Fatal(err)
	}
	key := map[string]types.AttributeValue{"PK": s("a"), "SK": s("x")}
	reads := map[string]func() (map[string]types.AttributeValue, error){
		"GetItem": func() (map[string]types.AttributeValue, error) {
			out, err := e.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("empties"), Key: key})
			return itemOf(out, err, func(o *dynamodb.GetItemOutput) []map[string]types.AttributeValue {
				return []map[string]types.AttributeValue{o.Item}
			})
		},
		"Query": func() (map[string]types.AttributeValue, error) {
			out, err := e.ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("empties"), KeyConditionExpression: aws.String("PK = :a"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a")}})
			return itemOf(out, err, func(o *dynamodb.QueryOutput) []map[string]types.AttributeValue { return o.Items })
		},
		"Scan": func() (map[string]types.AttributeValue, error) {
			out, err := e.ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("empties")})
			return itemOf(out, err, func(o *dynamodb.ScanOutput) []map[string]types.AttributeValue { return o.Items })
		},
		"BatchGetItem": func() (map[string]types.AttributeValue, error) {
			out, err := e.ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"empties": {Keys: []map[string]types.AttributeValue{key}}}})
			return itemOf(out, err, func(o *dynamodb.BatchGetItemOutput) []map[string]types.AttributeValue { return o.Responses["empties"] })
		},
		"TransactGetItems": func() (map[string]types.AttributeValue, error) {
			out, err := e.ddb.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{{Get: &types.Get{TableName: aws.String("empties"), Key: key}}}})
			return itemOf(out, err, func(o *dynamodb.TransactGetItemsOutput) []map[string]types.AttributeValue {
				return []map[string]types.AttributeValue{o.Responses[0].Item}
			})
		},
	}
	for name, read := range reads {
		got, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantEmpties(t, name, got)
	}
	out, err := e.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("empties"), Key: key, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		t.Fatal(err)
	}
	wantEmpties(t, "DeleteItem ALL_OLD", out.Attributes)
}

func itemOf[O any](out O, err error, items func(O) []map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	if err != nil {
		return nil, err
	}
	if all := items(out); len(all) == 1 {
		return all[0], nil
	}
	return nil, nil
}

func wantEmpties(t *testing.T, read string, item map[string]types.AttributeValue) {
	t.Helper()
	if m, ok := item["m"].(*types.AttributeValueMemberM); !ok || len(m.Value) != 0 {
		t.Errorf("%s: m is %#v, want an empty map", read, item["m"])
	}
	if l, ok := item["l"].(*types.AttributeValueMemberL); !ok || len(l.Value) != 0 {
		t.Errorf("%s: l is %#v, want an empty list", read, item["l"])
	}
	if name, ok := item["name"].(*types.AttributeValueMemberS); !ok || name.Value != "kept" {
		t.Errorf("%s: name is %#v, want \"kept\"", read, item["name"])
	}
}
