package dynamodb_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// ttlEnv is an env whose clock the test sets (epoch seconds) and whose
// TTL sweeps the test runs, with table "sessions" (stream on) and TTL
// enabled on attr.
type ttlEnv struct {
	*env
	clock *localawstest.Clock
}

const ttlT0 = 1_800_000_000

func newTTLEnv(t *testing.T, attr string) *ttlEnv {
	t.Helper()
	e, clock := newStoppedEnv(t, localddb.Options{TTLSweepInterval: -1}, time.Unix(ttlT0, 0))
	te := &ttlEnv{env: e, clock: clock}
	te.createTable(t, "sessions", "NEW_AND_OLD_IMAGES")
	if attr != "" {
		te.setTTL(t, attr, true)
	}
	return te
}

func (te *ttlEnv) setTTL(t *testing.T, attr string, enabled bool) {
	t.Helper()
	if _, err := te.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("sessions"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(enabled)}}); err != nil {
		t.Fatal(err)
	}
}

func (te *ttlEnv) put(t *testing.T, pk string, attrs map[string]types.AttributeValue) {
	t.Helper()
	item := map[string]types.AttributeValue{"PK": s(pk), "SK": s("x")}
	for k, v := range attrs {
		item[k] = v
	}
	if _, err := te.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("sessions"), Item: item}); err != nil {
		t.Fatal(err)
	}
}

func (te *ttlEnv) update(t *testing.T, pk, expr string, values map[string]types.AttributeValue) {
	t.Helper()
	if _, err := te.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("sessions"),
		Key: map[string]types.AttributeValue{"PK": s(pk), "SK": s("x")}, UpdateExpression: aws.String(expr),
		ExpressionAttributeValues: values}); err != nil {
		t.Fatal(err)
	}
}

func (te *ttlEnv) exists(t *testing.T, pk string) bool {
	t.Helper()
	out, err := te.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("sessions"), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": s(pk), "SK": s("x")}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item != nil
}

// wantExist reports each item of pks that exists when it should not, or
// is gone when it should exist, as "<pk> <why>".
func (te *ttlEnv) wantExist(t *testing.T, exist bool, why string, pks ...string) {
	t.Helper()
	for _, pk := range pks {
		if te.exists(t, pk) != exist {
			t.Errorf("%s %s", pk, why)
		}
	}
}

// wantTTLRemoves reports a number of TTL REMOVE records other than n.
func (te *ttlEnv) wantTTLRemoves(t *testing.T, n int) {
	t.Helper()
	if got := te.ttlRemoves(t); len(got) != n {
		t.Errorf("TTL REMOVE records = %v, want %d", got, n)
	}
}

// sweepAt sets the clock to ttlT0+offset seconds and sweeps.
func (te *ttlEnv) sweepAt(offset int64) {
	te.clock.Set(time.Unix(ttlT0+offset, 0))
	te.svc.SweepTTL()
}

// ttlRemoves returns the keys (PK) of the REMOVE records made by TTL.
func (te *ttlEnv) ttlRemoves(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, r := range te.records(t, te.streamArn(t, "sessions")) {
		if r.EventName != stypes.OperationTypeRemove || r.UserIdentity == nil {
			continue
		}
		if aws.ToString(r.UserIdentity.Type) != "Service" || aws.ToString(r.UserIdentity.PrincipalId) != "dynamodb.amazonaws.com" {
			t.Errorf("userIdentity = %+v", r.UserIdentity)
		}
		if len(r.Dynamodb.OldImage) == 0 {
			t.Errorf("TTL REMOVE without OldImage")
		}
		out = append(out, r.Dynamodb.Keys["PK"].(*stypes.AttributeValueMemberS).Value)
	}
	return out
}

func at(offset int64) types.AttributeValue { return n(strconv.FormatInt(ttlT0+offset, 10)) }

func TestTTLUpdatedLaterIsNotDeletedEarly(t *testing.T) {
	t.Parallel()
	te := newTTLEnv(t, "expiresAt")
	te.put(t, "update", map[string]types.AttributeValue{"expiresAt": at(100)})
	te.put(t, "put", map[string]types.AttributeValue{"expiresAt": at(100)})
	te.put(t, "tx", map[string]types.AttributeValue{"expiresAt": at(100)})
	te.put(t, "batch", map[string]types.AttributeValue{"expiresAt": at(100)})
	te.put(t, "sooner", map[string]types.AttributeValue{"expiresAt": at(1000)})

	te.update(t, "update", "SET expiresAt = :e", map[string]types.AttributeValue{":e": at(1000)})
	te.put(t, "put", map[string]types.AttributeValue{"expiresAt": at(1000)})
	if _, err := te.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: &types.Update{
		TableName: aws.String("sessions"), Key: map[string]types.AttributeValue{"PK": s("tx"), "SK": s("x")},
		UpdateExpression: aws.String("SET expiresAt = :e"), ExpressionAttributeValues: map[string]types.AttributeValue{":e": at(1000)}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := te.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"sessions": {{PutRequest: &types.PutRequest{
		Item: map[string]types.AttributeValue{"PK": s("batch"), "SK": s("x"), "expiresAt": at(1000)}}}}}}); err != nil {
		t.Fatal(err)
	}
	te.update(t, "sooner", "SET expiresAt = :e", map[string]types.AttributeValue{":e": at(50)})

	te.sweepAt(500)
	te.wantExist(t, true, "deleted at its old expiry", "update", "put", "tx", "batch")
	te.wantExist(t, false, "survived its expiry moved sooner", "sooner")
	te.sweepAt(1000)
	te.wantExist(t, false, "not deleted at its new expiry", "update", "put", "tx", "batch")
	te.wantTTLRemoves(t, 5)
}

func TestTTLRemovedAttributePreventsDeletion(t *testing.T) {
	t.Parallel()
	te := newTTLEnv(t, "expiresAt")
	for _, pk := range []string{"remove", "named", "tx", "string", "replaced", "deleted"} {
		te.put(t, pk, map[string]types.AttributeValue{"expiresAt": at(100), "v": s("1")})
	}
	te.update(t, "remove", "REMOVE expiresAt SET v = :v", map[string]types.AttributeValue{":v": s("2")})
	if _, err := te.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("sessions"),
		Key: map[string]types.AttributeValue{"PK": s("named"), "SK": s("x")}, UpdateExpression: aws.String("REMOVE #e"),
		ExpressionAttributeNames: map[string]string{"#e": "expiresAt"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := te.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: &types.Update{
		TableName: aws.String("sessions"), Key: map[string]types.AttributeValue{"PK": s("tx"), "SK": s("x")},
		UpdateExpression: aws.String("REMOVE expiresAt")}}}}); err != nil {
		t.Fatal(err)
	}
	te.update(t, "string", "SET expiresAt = :e", map[string]types.AttributeValue{":e": s(strconv.Itoa(ttlT0 + 100))})
	te.put(t, "replaced", map[string]types.AttributeValue{"v": s("2")})
	if _, err := te.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("sessions"),
		Key: map[string]types.AttributeValue{"PK": s("deleted"), "SK": s("x")}}); err != nil {
		t.Fatal(err)
	}
	te.put(t, "deleted", nil)

	te.sweepAt(200)
	te.wantExist(t, true, "deleted after its TTL attribute went", "remove", "named", "tx", "string", "replaced", "deleted")
	te.wantTTLRemoves(t, 0)
}

func TestTTLAttributeChangeRebuildsIndex(t *testing.T) {
	t.Parallel()
	te := newTTLEnv(t, "expiresAt")
	te.put(t, "old-attr", map[string]types.AttributeValue{"expiresAt": at(100)})
	te.put(t, "new-attr", map[string]types.AttributeValue{"ttl": at(100)})
	te.setTTL(t, "expiresAt", false)
	te.put(t, "while-off", map[string]types.AttributeValue{"ttl": at(100), "expiresAt": at(100)})
	te.sweepAt(200)
	if !te.exists(t, "old-attr") || !te.exists(t, "while-off") {
		t.Fatalf("items deleted while TTL was disabled")
	}

	te.setTTL(t, "ttl", true)
	te.sweepAt(300)
	if !te.exists(t, "old-attr") {
		t.Errorf("item expiring on the former TTL attribute was deleted")
	}
	te.wantExist(t, false, "(expired on the new TTL attribute) survived", "new-attr", "while-off")
	te.wantTTLRemoves(t, 2)

	// A table deleted and created again under the same name starts with
	// TTL disabled and nothing indexed.
	if _, err := te.ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("sessions")}); err != nil {
		t.Fatal(err)
	}
	te.createTable(t, "sessions", "")
	te.put(t, "again", map[string]types.AttributeValue{"ttl": at(100)})
	te.sweepAt(400)
	if !te.exists(t, "again") {
		t.Errorf("item of a table without TTL deleted")
	}
}

func TestTTLSweepDeletesManyAndKeepsAncient(t *testing.T) {
	t.Parallel()
	te := newTTLEnv(t, "expiresAt")
	const expired = 250 // more than one sweep batch
	for i := 0; i < expired; i += 25 {
		var reqs []types.WriteRequest
		for j := i; j < i+25; j++ {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				"PK": s("e" + strconv.Itoa(j)), "SK": s("x"), "expiresAt": at(int64(j % 7))}}})
		}
		if _, err := te.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"sessions": reqs}}); err != nil {
			t.Fatal(err)
		}
	}
	const year = 365 * 24 * 3600
	te.put(t, "ancient", map[string]types.AttributeValue{"expiresAt": at(-6 * year)})
	te.put(t, "fraction", map[string]types.AttributeValue{"expiresAt": n(strconv.Itoa(ttlT0+10) + ".75")})
	te.put(t, "future", map[string]types.AttributeValue{"expiresAt": at(3600)})

	te.sweepAt(10)
	scan, err := te.ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("sessions")})
	if err != nil {
		t.Fatal(err)
	}
	if scan.Count != 2 || !te.exists(t, "ancient") || !te.exists(t, "future") {
		t.Errorf("items left = %d, want ancient and future", scan.Count)
	}
	te.wantTTLRemoves(t, expired+1)

	// Past five years an item is left alone for good, unless the clock
	// goes back to within five years of its expiry.
	te.sweepAt(year)
	if !te.exists(t, "ancient") {
		t.Fatalf("ancient item deleted")
	}
	te.sweepAt(-2 * year)
	if te.exists(t, "ancient") {
		t.Errorf("item within five years of its expiry survived a sweep")
	}
}
