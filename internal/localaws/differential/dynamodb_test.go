package differential_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type item = map[string]ddbtypes.AttributeValue

func s(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberS{Value: v} }
func n(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberN{Value: v} }
func ni(v int) ddbtypes.AttributeValue   { return n(strconv.Itoa(v)) }
func vals(kv ...any) map[string]ddbtypes.AttributeValue {
	out := item{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1].(ddbtypes.AttributeValue)
	}
	return out
}

// tableSpec is a table to create: its keys (name and type, sort key
// optional), and GSIs keyed the same way.
type tableSpec struct {
	name   string
	pk, sk string // "name:S"; sk may be empty
	gsis   map[string][2]string
	stream ddbtypes.StreamViewType
}

func keyAttr(spec string) (string, ddbtypes.ScalarAttributeType) {
	name, typ, _ := cutLast(spec, ":")
	return name, ddbtypes.ScalarAttributeType(typ)
}

func cutLast(s, sep string) (string, string, bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

func (ts tableSpec) input() *dynamodb.CreateTableInput {
	defs := map[string]ddbtypes.ScalarAttributeType{}
	schema := func(pk, sk string) []ddbtypes.KeySchemaElement {
		name, typ := keyAttr(pk)
		defs[name] = typ
		out := []ddbtypes.KeySchemaElement{{AttributeName: aws.String(name), KeyType: ddbtypes.KeyTypeHash}}
		if sk != "" {
			name, typ := keyAttr(sk)
			defs[name] = typ
			out = append(out, ddbtypes.KeySchemaElement{AttributeName: aws.String(name), KeyType: ddbtypes.KeyTypeRange})
		}
		return out
	}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(ts.name),
		KeySchema:   schema(ts.pk, ts.sk),
		BillingMode: ddbtypes.BillingModePayPerRequest,
	}
	for _, name := range slices.Sorted(maps.Keys(ts.gsis)) {
		k := ts.gsis[name]
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, ddbtypes.GlobalSecondaryIndex{
			IndexName:  aws.String(name),
			KeySchema:  schema(k[0], k[1]),
			Projection: &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionTypeAll},
		})
	}
	if ts.stream != "" {
		in.StreamSpecification = &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ts.stream}
	}
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		in.AttributeDefinitions = append(in.AttributeDefinitions, ddbtypes.AttributeDefinition{AttributeName: aws.String(name), AttributeType: defs[name]})
	}
	return in
}

func (r *run) ddb() *dynamodb.Client { return dynamodb.NewFromConfig(r.cfg) }

// compareOnTable is compare with the table ts created first in each run.
func compareOnTable(t *testing.T, name string, ts tableSpec, fn func(r *run, table string)) {
	t.Helper()
	compare(t, name, func(r *run) {
		r.createTable(ts)
		fn(r, ts.name)
	})
}

// createTable creates the table; it records only a failure (the
// dynamodb/tables scenario compares the descriptions).
func (r *run) createTable(ts tableSpec) {
	if _, err := r.ddb().CreateTable(r.ctx, ts.input()); err != nil {
		r.rec("CreateTable "+ts.name, nil, err)
	}
}

func (r *run) put(table string, it item) {
	_, err := r.ddb().PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: it})
	if err != nil {
		r.rec("PutItem failed", nil, err)
	}
}

// queryAll pages through a query and records each page.
func (r *run) queryAll(name string, in *dynamodb.QueryInput) {
	recordPages(r, name, &in.ExclusiveStartKey, func() (*dynamodb.QueryOutput, error) { return r.ddb().Query(r.ctx, in) },
		func(o *dynamodb.QueryOutput) map[string]ddbtypes.AttributeValue { return o.LastEvaluatedKey })
}

// scanAll pages through a scan and records each page.
func (r *run) scanAll(name string, in *dynamodb.ScanInput) {
	recordPages(r, name, &in.ExclusiveStartKey, func() (*dynamodb.ScanOutput, error) { return r.ddb().Scan(r.ctx, in) },
		func(o *dynamodb.ScanOutput) map[string]ddbtypes.AttributeValue { return o.LastEvaluatedKey })
}

// recordPages records up to 50 pages of a paged read: while a page has a
// LastEvaluatedKey (last), it becomes the next read's start.
func recordPages[O any](r *run, name string, start *map[string]ddbtypes.AttributeValue, read func() (*O, error), last func(*O) map[string]ddbtypes.AttributeValue) {
	for page := 1; page <= 50; page++ {
		out, err := read()
		r.rec(fmt.Sprintf("%s page %d", name, page), out, err)
		if err != nil || len(last(out)) == 0 {
			return
		}
		*start = last(out)
	}
}

func TestDifferentialDynamoDBTables(t *testing.T) {
	compare(t, "dynamodb/tables", func(r *run) {
		ts := tableSpec{name: "diff-tables", pk: "PK:S", sk: "SK:S",
			gsis:   map[string][2]string{"byStatus": {"GPK:S", "GSK:N"}},
			stream: ddbtypes.StreamViewTypeNewAndOldImages}
		created, err := r.ddb().CreateTable(r.ctx, ts.input())
		r.rec("CreateTable", created, err)
		out, err := r.ddb().CreateTable(r.ctx, ts.input())
		r.rec("CreateTable again", out, err)
		desc, err := r.ddb().DescribeTable(r.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(ts.name)})
		r.rec("DescribeTable", desc, err)
		missing, err := r.ddb().DescribeTable(r.ctx, &dynamodb.DescribeTableInput{TableName: aws.String("diff-no-such-table")})
		r.rec("DescribeTable missing", missing, err)
		ttl, err := r.ddb().UpdateTimeToLive(r.ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(ts.name),
			TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)}})
		r.rec("UpdateTimeToLive", ttl, err)
		dttl, err := r.ddb().DescribeTimeToLive(r.ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(ts.name)})
		r.rec("DescribeTimeToLive", dttl, err)
		list, err := r.ddb().ListTables(r.ctx, &dynamodb.ListTablesInput{})
		listed := err == nil && slices.Contains(list.TableNames, ts.name)
		r.note("ListTables lists the table", listed)
		put, err := r.ddb().PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String("diff-no-such-table"), Item: vals("PK", s("a"), "SK", s("b"))})
		r.rec("PutItem missing table", put, err)
		bad, err := r.ddb().PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String(ts.name), Item: vals("PK", s("a"))})
		r.rec("PutItem without sort key", bad, err)
		wrongType, err := r.ddb().PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String(ts.name), Item: vals("PK", s("a"), "SK", s("b"), "GPK", s("x"), "GSK", s("not a number"))})
		r.rec("PutItem with a GSI key of the wrong type", wrongType, err)
		del, err := r.ddb().DeleteTable(r.ctx, &dynamodb.DeleteTableInput{TableName: aws.String(ts.name)})
		r.rec("DeleteTable", del, err)
	})
}

// TestDifferentialDynamoDBIndexKeysThroughUpdateItem: many items gain GSI keys
// through UpdateItem, then half of them lose them again; the index must
// hold exactly the items that have its keys.
func TestDifferentialDynamoDBIndexKeysThroughUpdateItem(t *testing.T) {
	const items = 30
	compareOnTable(t, "dynamodb/gsi-updateitem", tableSpec{name: "diff-gsi-update", pk: "PK:S", sk: "SK:S", gsis: map[string][2]string{"pending": {"GPK:S", "GSK:S"}}}, func(r *run, table string) {
		for i := range items {
			r.put(table, vals("PK", s(fmt.Sprintf("order#%02d", i)), "SK", s("OUTBOX#1"), "n", ni(i)))
		}
		for i := range items {
			_, err := r.ddb().UpdateItem(r.ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(table), Key: vals("PK", s(fmt.Sprintf("order#%02d", i)), "SK", s("OUTBOX#1")),
				UpdateExpression:          aws.String("SET GPK = :p, GSK = :k"),
				ExpressionAttributeValues: vals(":p", s(fmt.Sprintf("PENDING#%d", i%3)), ":k", s(fmt.Sprintf("k%02d", i))),
			})
			if err != nil {
				r.rec("UpdateItem SET failed", nil, err)
			}
		}
		r.indexCounts("after SET", table, 3)
		for i := 0; i < items; i += 2 {
			_, err := r.ddb().UpdateItem(r.ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(table), Key: vals("PK", s(fmt.Sprintf("order#%02d", i)), "SK", s("OUTBOX#1")),
				UpdateExpression: aws.String("REMOVE GPK, GSK"),
			})
			if err != nil {
				r.rec("UpdateItem REMOVE failed", nil, err)
			}
		}
		r.indexCounts("after REMOVE", table, 3)
		r.queryAll("Query shard 1", &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("pending"),
			KeyConditionExpression:    aws.String("GPK = :p"),
			ExpressionAttributeValues: vals(":p", s("PENDING#1")), Limit: aws.Int32(4)})
		r.scanAll("Scan index", &dynamodb.ScanInput{TableName: aws.String(table), IndexName: aws.String("pending"), ProjectionExpression: aws.String("PK, GPK")})
	})
}

// indexCounts records how many items each shard of the GSI holds.
func (r *run) indexCounts(name, table string, shards int) {
	counts := map[string]int32{}
	for shard := range shards {
		out, err := r.ddb().Query(r.ctx, &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("pending"),
			KeyConditionExpression:    aws.String("GPK = :p"),
			ExpressionAttributeValues: vals(":p", s(fmt.Sprintf("PENDING#%d", shard))), Select: ddbtypes.SelectCount})
		if err != nil {
			r.rec(name+" Query failed", nil, err)
			continue
		}
		counts[fmt.Sprintf("PENDING#%d", shard)] = out.Count
	}
	r.note(name+" index items per shard", counts)
}

// TestDifferentialDynamoDBNumericSortOrder: numbers sort by value, not as strings,
// on the table and on a GSI, in both directions.
func TestDifferentialDynamoDBNumericSortOrder(t *testing.T) {
	compareOnTable(t, "dynamodb/numeric-sort", tableSpec{name: "diff-numeric-sort", pk: "PK:S", sk: "N:N", gsis: map[string][2]string{"byG": {"G:S", "N:N"}}}, func(r *run, table string) {
		for _, v := range []string{"10", "9", "-3", "1.5", "100", "-20", "0", "2e1", "0.001"} {
			r.put(table, vals("PK", s("p"), "N", n(v), "G", s("g")))
		}
		for _, forward := range []bool{true, false} {
			dir := fmt.Sprintf("forward=%v", forward)
			r.queryAll("Query table "+dir, &dynamodb.QueryInput{TableName: aws.String(table), ScanIndexForward: aws.Bool(forward),
				KeyConditionExpression: aws.String("PK = :p"), ExpressionAttributeValues: vals(":p", s("p"))})
			r.queryAll("Query index "+dir, &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("byG"), ScanIndexForward: aws.Bool(forward),
				KeyConditionExpression: aws.String("G = :g"), ExpressionAttributeValues: vals(":g", s("g"))})
		}
		r.queryAll("Query between", &dynamodb.QueryInput{TableName: aws.String(table),
			KeyConditionExpression:    aws.String("PK = :p AND N BETWEEN :lo AND :hi"),
			ExpressionAttributeValues: vals(":p", s("p"), ":lo", n("-5"), ":hi", n("10"))})
	})
}

// TestDifferentialDynamoDBLimitWithFilter: Limit bounds the items evaluated, before
// the filter; pages may be empty and still carry a LastEvaluatedKey.
func TestDifferentialDynamoDBLimitWithFilter(t *testing.T) {
	compareOnTable(t, "dynamodb/limit-filter", tableSpec{name: "diff-limit-filter", pk: "PK:S", sk: "SK:N"}, func(r *run, table string) {
		for i := range 12 {
			status := "DONE"
			if i%4 == 0 {
				status = "PENDING"
			}
			r.put(table, vals("PK", s("p"), "SK", ni(i), "status", s(status)))
		}
		filter := vals(":p", s("p"), ":s", s("PENDING"))
		r.queryAll("Query", &dynamodb.QueryInput{TableName: aws.String(table), Limit: aws.Int32(3),
			KeyConditionExpression: aws.String("PK = :p"), FilterExpression: aws.String("#s = :s"),
			ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: filter})
		r.scanAll("Scan", &dynamodb.ScanInput{TableName: aws.String(table), Limit: aws.Int32(5),
			FilterExpression: aws.String("#s = :s"), ExpressionAttributeNames: map[string]string{"#s": "status"},
			ExpressionAttributeValues: vals(":s", s("PENDING"))})
		r.queryAll("Query Select COUNT", &dynamodb.QueryInput{TableName: aws.String(table), Limit: aws.Int32(5), Select: ddbtypes.SelectCount,
			KeyConditionExpression: aws.String("PK = :p"), FilterExpression: aws.String("#s = :s"),
			ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: filter})
	})
}

// TestDifferentialDynamoDBPagingAfterDeletedStartKey: a page's LastEvaluatedKey
// stays a valid ExclusiveStartKey after that item is deleted.
func TestDifferentialDynamoDBPagingAfterDeletedStartKey(t *testing.T) {
	compareOnTable(t, "dynamodb/paging-deleted-key", tableSpec{name: "diff-paging-deleted", pk: "PK:S", sk: "SK:S", gsis: map[string][2]string{"byG": {"G:S", "SK:S"}}}, func(r *run, table string) {
		for i := range 8 {
			r.put(table, vals("PK", s("p"), "SK", s(fmt.Sprintf("k%d", i)), "G", s("g")))
		}
		page := func(name string, in *dynamodb.QueryInput) item {
			out, err := r.ddb().Query(r.ctx, in)
			r.rec(name, out, err)
			if err != nil {
				return nil
			}
			return out.LastEvaluatedKey
		}
		tableQuery := func() *dynamodb.QueryInput {
			return &dynamodb.QueryInput{TableName: aws.String(table), Limit: aws.Int32(3),
				KeyConditionExpression: aws.String("PK = :p"), ExpressionAttributeValues: vals(":p", s("p"))}
		}
		indexQuery := func() *dynamodb.QueryInput {
			return &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("byG"), Limit: aws.Int32(3),
				KeyConditionExpression: aws.String("G = :g"), ExpressionAttributeValues: vals(":g", s("g"))}
		}
		lek := page("Query table first page", tableQuery())
		ilek := page("Query index first page", indexQuery())
		_, err := r.ddb().DeleteItem(r.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: vals("PK", s("p"), "SK", s("k2"))})
		r.rec("DeleteItem the start key's item", nil, err)
		in := tableQuery()
		in.ExclusiveStartKey = lek
		r.queryAll("Query table after the deleted key", in)
		in = indexQuery()
		in.ExclusiveStartKey = ilek
		r.queryAll("Query index after the deleted key", in)
		scan, err := r.ddb().Scan(r.ctx, &dynamodb.ScanInput{TableName: aws.String(table), Limit: aws.Int32(2),
			ExclusiveStartKey: vals("PK", s("p"), "SK", s("k2"))})
		r.rec("Scan after the deleted key", scan, err)
	})
}
