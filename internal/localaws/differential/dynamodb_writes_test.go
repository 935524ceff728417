package differential_test

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestDifferentialDynamoDBTransactions: a cancelled transaction reports one
// reason per action, writes nothing, and a good one writes everything.
func TestDifferentialDynamoDBTransactions(t *testing.T) {
	compareOnTable(t, "dynamodb/transactions", tableSpec{name: "diff-transactions", pk: "PK:S", sk: "SK:S"}, func(r *run, table string) {
		r.put(table, vals("PK", s("order#1"), "SK", s("STATE"), "v", ni(1)))
		put := func(sk string) ddbtypes.TransactWriteItem {
			return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: aws.String(table), Item: vals("PK", s("order#1"), "SK", s(sk))}}
		}
		conflicting := ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: aws.String(table),
			Item:                                vals("PK", s("order#1"), "SK", s("STATE"), "v", ni(2)),
			ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
			ReturnValuesOnConditionCheckFailure: ddbtypes.ReturnValuesOnConditionCheckFailureAllOld}}
		out, err := r.ddb().TransactWriteItems(r.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{put("OUTBOX#1"), conflicting, put("OUTBOX#2")}})
		r.rec("TransactWriteItems cancelled", out, err)
		check := ddbtypes.TransactWriteItem{ConditionCheck: &ddbtypes.ConditionCheck{TableName: aws.String(table),
			Key: vals("PK", s("order#1"), "SK", s("STATE")), ConditionExpression: aws.String("v = :one"), ExpressionAttributeValues: vals(":one", ni(1))}}
		update := ddbtypes.TransactWriteItem{Update: &ddbtypes.Update{TableName: aws.String(table),
			Key: vals("PK", s("order#1"), "SK", s("COUNTER")), UpdateExpression: aws.String("ADD c :one"), ExpressionAttributeValues: vals(":one", ni(1))}}
		out, err = r.ddb().TransactWriteItems(r.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{put("OUTBOX#1"), check, update},
			ReturnConsumedCapacity: ddbtypes.ReturnConsumedCapacityTotal})
		r.rec("TransactWriteItems committed", out, err)
		dup, err := r.ddb().TransactWriteItems(r.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{put("OUTBOX#3"), put("OUTBOX#3")}})
		r.rec("TransactWriteItems two actions on one item", dup, err)
		get, err := r.ddb().TransactGetItems(r.ctx, &dynamodb.TransactGetItemsInput{TransactItems: []ddbtypes.TransactGetItem{
			{Get: &ddbtypes.Get{TableName: aws.String(table), Key: vals("PK", s("order#1"), "SK", s("OUTBOX#1"))}},
			{Get: &ddbtypes.Get{TableName: aws.String(table), Key: vals("PK", s("order#1"), "SK", s("OUTBOX#2"))}},
			{Get: &ddbtypes.Get{TableName: aws.String(table), Key: vals("PK", s("order#1"), "SK", s("COUNTER"))}},
		}})
		r.rec("TransactGetItems", get, err)
		r.queryAll("Query the partition", &dynamodb.QueryInput{TableName: aws.String(table), ReturnConsumedCapacity: ddbtypes.ReturnConsumedCapacityTotal,
			KeyConditionExpression: aws.String("PK = :p"), ExpressionAttributeValues: vals(":p", s("order#1"))})
		pi, err := r.ddb().PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: vals("PK", s("order#2"), "SK", s("STATE")),
			ReturnConsumedCapacity: ddbtypes.ReturnConsumedCapacityTotal})
		r.rec("PutItem with consumed capacity", pi, err)
		gi, err := r.ddb().GetItem(r.ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: vals("PK", s("order#2"), "SK", s("STATE")),
			ReturnConsumedCapacity: ddbtypes.ReturnConsumedCapacityTotal, ConsistentRead: aws.Bool(true)})
		r.rec("GetItem with consumed capacity", gi, err)
	})
}

// TestDifferentialDynamoDBConditionalUpdates: condition expressions, return values
// and update actions (SET, REMOVE, ADD, DELETE, if_not_exists,
// list_append).
func TestDifferentialDynamoDBConditionalUpdates(t *testing.T) {
	compareOnTable(t, "dynamodb/conditional", tableSpec{name: "diff-conditional", pk: "PK:S", sk: "SK:S"}, func(r *run, table string) {
		key := vals("PK", s("p"), "SK", s("s"))
		first, err := r.ddb().PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: vals("PK", s("p"), "SK", s("s"), "status", s("PENDING"), "n", ni(1)),
			ConditionExpression: aws.String("attribute_not_exists(PK)"), ReturnValues: ddbtypes.ReturnValueAllOld})
		r.rec("PutItem if absent", first, err)
		again, err := r.ddb().PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: vals("PK", s("p"), "SK", s("s")),
			ConditionExpression: aws.String("attribute_not_exists(PK)"), ReturnValuesOnConditionCheckFailure: ddbtypes.ReturnValuesOnConditionCheckFailureAllOld})
		r.rec("PutItem if absent again", again, err)
		updates := []struct {
			name, expr, cond string
			values           map[string]ddbtypes.AttributeValue
			ret              ddbtypes.ReturnValue
		}{
			{"SET with condition", "SET #s = :pub, tags = :tags, l = :l", "#s = :pending",
				vals(":pub", s("PUBLISHED"), ":pending", s("PENDING"), ":tags", &ddbtypes.AttributeValueMemberSS{Value: []string{"a", "b", "c"}}, ":l", &ddbtypes.AttributeValueMemberL{Value: []ddbtypes.AttributeValue{ni(1)}}), ddbtypes.ReturnValueAllNew},
			{"SET with a failing condition", "SET #s = :pub", "#s = :pending", vals(":pub", s("PUBLISHED"), ":pending", s("PENDING")), ddbtypes.ReturnValueAllNew},
			{"ADD and DELETE", "ADD n :two DELETE tags :b", "", vals(":two", ni(2), ":b", &ddbtypes.AttributeValueMemberSS{Value: []string{"b"}}), ddbtypes.ReturnValueUpdatedNew},
			{"if_not_exists and list_append", "SET firstSeen = if_not_exists(firstSeen, :now), l = list_append(l, :more)", "", vals(":now", ni(5), ":more", &ddbtypes.AttributeValueMemberL{Value: []ddbtypes.AttributeValue{ni(2), s("x")}}), ddbtypes.ReturnValueUpdatedOld},
			{"REMOVE top-level attributes", "REMOVE firstSeen, tags", "attribute_exists(firstSeen)", nil, ddbtypes.ReturnValueAllNew},
			{"reserved word as a name", "SET first = :v", "", vals(":v", ni(1)), ddbtypes.ReturnValueAllNew},
			{"SET an unchanged value", "SET n = :three", "", vals(":three", ni(3)), ddbtypes.ReturnValueUpdatedNew},
			{"SET nested map", "SET m = :m", "", vals(":m", &ddbtypes.AttributeValueMemberM{Value: vals("a", ni(1), "b", &ddbtypes.AttributeValueMemberBOOL{Value: true}, "c", &ddbtypes.AttributeValueMemberNULL{Value: true})}), ddbtypes.ReturnValueUpdatedNew},
			{"REMOVE nested attribute", "REMOVE m.a", "", nil, ddbtypes.ReturnValueAllNew},
			{"arithmetic", "SET n = n + :ten", "n > :zero", vals(":ten", ni(10), ":zero", ni(0)), ddbtypes.ReturnValueUpdatedNew},
			{"key attribute", "SET SK = :x", "", vals(":x", s("y")), ddbtypes.ReturnValueAllNew},
			{"unused value", "SET a = :a", "", vals(":a", ni(1), ":unused", ni(2)), ddbtypes.ReturnValueNone},
			{"SET an empty map and list", "SET em = :em, el = :el", "", vals(":em", &ddbtypes.AttributeValueMemberM{Value: map[string]ddbtypes.AttributeValue{}}, ":el", &ddbtypes.AttributeValueMemberL{Value: []ddbtypes.AttributeValue{}}), ddbtypes.ReturnValueUpdatedNew},
		}
		for _, u := range updates {
			in := &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key, UpdateExpression: aws.String(u.expr),
				ExpressionAttributeValues: u.values, ReturnValues: u.ret}
			if u.cond != "" {
				in.ConditionExpression = aws.String(u.cond)
				in.ReturnValuesOnConditionCheckFailure = ddbtypes.ReturnValuesOnConditionCheckFailureAllOld
			}
			if u.expr != "" && slices.Contains([]string{"SET with condition", "SET with a failing condition"}, u.name) {
				in.ExpressionAttributeNames = map[string]string{"#s": "status"}
			}
			out, err := r.ddb().UpdateItem(r.ctx, in)
			r.rec("UpdateItem "+u.name, out, err)
		}
		read, err := r.ddb().GetItem(r.ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
		r.rec("GetItem with an empty map and list", read, err)
		del, err := r.ddb().DeleteItem(r.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key,
			ConditionExpression: aws.String("n = :wrong"), ExpressionAttributeValues: vals(":wrong", ni(99))})
		r.rec("DeleteItem with a failing condition", del, err)
		del, err = r.ddb().DeleteItem(r.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key, ReturnValues: ddbtypes.ReturnValueAllOld})
		r.rec("DeleteItem", del, err)
		get, err := r.ddb().GetItem(r.ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key})
		r.rec("GetItem after delete", get, err)
	})
}

// TestDifferentialDynamoDBBatches: BatchWriteItem and BatchGetItem, with missing
// keys, projections and their limits.
func TestDifferentialDynamoDBBatches(t *testing.T) {
	compareOnTable(t, "dynamodb/batch", tableSpec{name: "diff-batch", pk: "PK:S", sk: "SK:S"}, func(r *run, table string) {
		var writes []ddbtypes.WriteRequest
		for i := range 25 {
			writes = append(writes, ddbtypes.WriteRequest{PutRequest: &ddbtypes.PutRequest{Item: vals("PK", s("p"), "SK", s(fmt.Sprintf("%02d", i)), "n", ni(i))}})
		}
		w, err := r.ddb().BatchWriteItem(r.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]ddbtypes.WriteRequest{table: writes}})
		r.rec("BatchWriteItem 25 puts", w, err)
		tooMany := append(append([]ddbtypes.WriteRequest(nil), writes...), ddbtypes.WriteRequest{PutRequest: &ddbtypes.PutRequest{Item: vals("PK", s("p"), "SK", s("25"))}})
		w, err = r.ddb().BatchWriteItem(r.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]ddbtypes.WriteRequest{table: tooMany}})
		r.rec("BatchWriteItem 26 puts", w, err)
		w, err = r.ddb().BatchWriteItem(r.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]ddbtypes.WriteRequest{table: {writes[0], writes[0]}}})
		r.rec("BatchWriteItem duplicate keys", w, err)
		var keys []map[string]ddbtypes.AttributeValue
		for i := 20; i < 30; i++ {
			keys = append(keys, vals("PK", s("p"), "SK", s(fmt.Sprintf("%02d", i))))
		}
		g, err := r.ddb().BatchGetItem(r.ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]ddbtypes.KeysAndAttributes{
			table: {Keys: keys, ProjectionExpression: aws.String("SK, n"), ConsistentRead: aws.Bool(true)}}})
		if err == nil {
			// Responses come in no particular order (BatchGetItem).
			items := g.Responses[table]
			sort.Slice(items, func(i, j int) bool { return sortKey(items[i]) < sortKey(items[j]) })
		}
		r.rec("BatchGetItem with missing keys", g, err)
		g, err = r.ddb().BatchGetItem(r.ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]ddbtypes.KeysAndAttributes{
			"diff-no-such-table": {Keys: keys[:1]}}})
		r.rec("BatchGetItem missing table", g, err)
		var dels []ddbtypes.WriteRequest
		for i := range 10 {
			dels = append(dels, ddbtypes.WriteRequest{DeleteRequest: &ddbtypes.DeleteRequest{Key: vals("PK", s("p"), "SK", s(fmt.Sprintf("%02d", i)))}})
		}
		w, err = r.ddb().BatchWriteItem(r.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]ddbtypes.WriteRequest{table: dels}})
		r.rec("BatchWriteItem deletes", w, err)
		r.scanAll("Scan", &dynamodb.ScanInput{TableName: aws.String(table), Select: ddbtypes.SelectCount})
	})
}

func sortKey(it map[string]ddbtypes.AttributeValue) string {
	if v, ok := it["SK"].(*ddbtypes.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}
