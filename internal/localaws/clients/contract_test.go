package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The events of TestGuideWritersWriteTheGoWritersActions, the same in every
// language.
const (
	contractTable    = "shop"
	contractKey      = "ORDER#1234"
	contractOccurred = "2026-11-30T10:15:00.123Z"
	contractTrace    = "Root=1-5759e988-bd862e3fe1be46a994272793"
	contractFirstID  = "01M8NZ6R8V7V3B9Q2M4K8D1X6R"
	contractSecondID = "01M8NZ6R8V7V3B9Q2M4K8D1X6S"
)

// contractTS prints, as JSON, the guide's TypeScript actions for the events:
// an unordered Put, two ordered events after sequence 4, and a key's first
// ordered event.
const contractTS = `import { orderedActions, outboxPut } from "./outbox.js";
const event = (id: string) => ({ id, partitionKey: "ORDER#1234", source: "com.example.orders", detailType: "OrderPlaced",
  detail: { orderId: "1234", total: 42.5 }, occurredAt: new Date("2026-11-30T10:15:00.123Z"),
  traceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793" });
const first = "01M8NZ6R8V7V3B9Q2M4K8D1X6R", second = "01M8NZ6R8V7V3B9Q2M4K8D1X6S";
console.log(JSON.stringify({
  unordered: [outboxPut("shop", event(first))],
  ordered: orderedActions("shop", "ORDER#1234", 4, [event(first), event(second)]),
  firstOfKey: orderedActions("shop", "ORDER#1234", 0, [event(first)]),
}));
`

// contractPython is contractTS in Python.
const contractPython = `import json
from datetime import datetime, timezone
from outbox_contract import ordered_actions, outbox_put

def event(event_id):
    return {"event_id": event_id, "partition_key": "ORDER#1234", "source": "com.example.orders",
            "detail_type": "OrderPlaced", "detail": {"orderId": "1234", "total": 42.5},
            "occurred_at": datetime(2026, 11, 30, 10, 15, 0, 123000, tzinfo=timezone.utc),
            "trace_header": "Root=1-5759e988-bd862e3fe1be46a994272793"}

first, second = "01M8NZ6R8V7V3B9Q2M4K8D1X6R", "01M8NZ6R8V7V3B9Q2M4K8D1X6S"
print(json.dumps({
    "unordered": [outbox_put("shop", **event(first))],
    "ordered": ordered_actions("shop", "ORDER#1234", 4, [event(first), event(second)]),
    "firstOfKey": ordered_actions("shop", "ORDER#1234", 0, [event(first)]),
}))
`

// TestGuideWritersWriteTheGoWritersActions: for the same events, ordering
// key and last sequence, the guide's TypeScript and Python modules produce
// the Go writer's transaction actions, attribute for attribute and
// expression for expression.
func TestGuideWritersWriteTheGoWritersActions(t *testing.T) {
	t.Parallel()
	requirePython(t)
	requireNode(t)
	want := goContractActions(t)

	js := jsWorkDir(t)
	writeGuideFile(t, "record-contract.md", "outbox.ts", js)
	writeFile(t, js, "contract.ts", contractTS)
	compileTS(t, js, "module", "outbox.ts", "contract.ts")
	compareActions(t, "TypeScript", run(t, js, clientEnv(""), "node", "contract.js"), want)

	py := t.TempDir()
	writeGuideFile(t, "record-contract.md", "outbox_contract.py", py)
	writeFile(t, py, "contract.py", contractPython)
	compareActions(t, "Python", run(t, py, clientEnv(""), debianPython, filepath.Join(py, "contract.py")), want)
}

// goContractActions returns the Go writer's actions for the events of
// contractTS, as the JSON of DynamoDB's low-level format.
func goContractActions(t *testing.T) any {
	t.Helper()
	occurred, err := time.Parse(time.RFC3339Nano, contractOccurred)
	if err != nil {
		t.Fatal(err)
	}
	w, err := outbox.NewWriter(nil, outbox.Table{Name: contractTable, Layout: outbox.LayoutShared})
	if err != nil {
		t.Fatal(err)
	}
	event := func(id string, ordered bool) outbox.Event {
		e := outbox.Event{ID: id, PartitionKey: contractKey, Source: "com.example.orders", DetailType: "OrderPlaced",
			Detail: json.RawMessage(`{"orderId":"1234","total":42.5}`), OccurredAt: occurred, TraceHeader: contractTrace}
		if ordered {
			e.OrderingKey = contractKey
		}
		return e
	}
	actions := func(last int64, events ...outbox.Event) []any {
		a, _, err := w.ActionsAfter(map[string]int64{contractKey: last}, nil, events...)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]any, len(a))
		for i, action := range a {
			out[i] = actionJSON(action)
		}
		return out
	}
	doc := map[string]any{
		"unordered":  actions(0, event(contractFirstID, false)),
		"ordered":    actions(4, event(contractFirstID, true), event(contractSecondID, true)),
		"firstOfKey": actions(0, event(contractFirstID, true)),
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var normalized any
	if err := json.Unmarshal(b, &normalized); err != nil {
		t.Fatal(err)
	}
	return normalized
}

func compareActions(t *testing.T, lang, out string, want any) {
	t.Helper()
	var got any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%s printed %q: %v", lang, out, err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("%s's actions differ from the Go writer's:\n%s\nGo:\n%s", lang, g, w)
	}
}

// actionJSON is a Put or Update action as the low-level JSON of the other
// SDKs, without its empty fields.
func actionJSON(a types.TransactWriteItem) map[string]any {
	switch {
	case a.Put != nil:
		return map[string]any{"Put": withoutEmpty(map[string]any{
			"TableName": aws.ToString(a.Put.TableName), "Item": itemJSON(a.Put.Item),
			"ConditionExpression": aws.ToString(a.Put.ConditionExpression), "ExpressionAttributeNames": a.Put.ExpressionAttributeNames,
			"ExpressionAttributeValues": itemJSON(a.Put.ExpressionAttributeValues),
		})}
	case a.Update != nil:
		return map[string]any{"Update": withoutEmpty(map[string]any{
			"TableName": aws.ToString(a.Update.TableName), "Key": itemJSON(a.Update.Key),
			"UpdateExpression": aws.ToString(a.Update.UpdateExpression), "ConditionExpression": aws.ToString(a.Update.ConditionExpression),
			"ExpressionAttributeNames": a.Update.ExpressionAttributeNames, "ExpressionAttributeValues": itemJSON(a.Update.ExpressionAttributeValues),
		})}
	}
	return map[string]any{"unexpected": fmt.Sprintf("%+v", a)}
}

func withoutEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		if reflect.ValueOf(v).Len() == 0 {
			delete(m, k)
		}
	}
	return m
}

// itemJSON is an item of string and number attributes in the low-level
// format.
func itemJSON(item map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(item))
	for name, v := range item {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			out[name] = map[string]string{"S": v.Value}
		case *types.AttributeValueMemberN:
			out[name] = map[string]string{"N": v.Value}
		default:
			out[name] = fmt.Sprintf("unexpected %T", v)
		}
	}
	return out
}

// checkOrderedExamples checks what the guide's ordered examples wrote to
// the shop table: the printed numbers of ORDER#1234 are 1..n, one each, its
// stored events hold exactly them, and its sequence item holds n.
func checkOrderedExamples(t *testing.T, db *dynamodb.Client, out string, n int64) {
	t.Helper()
	printed := map[int64]int{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "sequence" || f[1] != contractKey {
			continue
		}
		seq, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("printed %q", line)
		}
		printed[seq]++
	}
	for seq := int64(1); seq <= n; seq++ {
		if printed[seq] != 1 {
			t.Errorf("sequence %d of %s printed %d times, want once: %v", seq, contractKey, printed[seq], printed)
		}
	}
	if len(printed) != int(n) {
		t.Errorf("printed sequences %v, want 1..%d", printed, n)
	}
	table := outbox.Table{Name: contractTable, Layout: outbox.LayoutShared}.WithDefaults()
	w, err := outbox.NewWriter(db, table)
	if err != nil {
		t.Fatal(err)
	}
	last, err := w.LastSequences(context.Background(), contractKey)
	if err != nil || last[contractKey] != n {
		t.Errorf("the sequence item of %s holds %d (%v), want %d", contractKey, last[contractKey], err, n)
	}
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if stored := storedSequences(t, db, table); !slices.Equal(stored, want) {
		t.Errorf("the ordered events of %s hold %v, want %v", contractKey, stored, want)
	}
}

// storedSequences returns the sorted sequences of the ordered events of
// contractKey in table.
func storedSequences(t *testing.T, db *dynamodb.Client, table outbox.Table) []int64 {
	t.Helper()
	out, err := db.Query(context.Background(), &dynamodb.QueryInput{
		TableName: aws.String(table.Name), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :prefix)"),
		ExpressionAttributeNames:  map[string]string{"#pk": table.PartitionKey, "#sk": table.SortKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: contractKey}, ":prefix": &types.AttributeValueMemberS{Value: table.SortKeyPrefix}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, item := range out.Items {
		r, err := table.ParseItem(item)
		if err != nil {
			t.Fatalf("an item of %s breaks the contract: %v", contractKey, err)
		}
		if r.OrderingKey == contractKey {
			seqs = append(seqs, r.Sequence)
		}
	}
	slices.Sort(seqs)
	return seqs
}

// conflictTS writes the first event of a key twice from the same last
// sequence, 0: the second write must be a sequence conflict, and a write
// refused for another reason (the same event id again, from the right last
// sequence) must not.
const conflictTS = `import { DynamoDBClient, TransactWriteItemsCommand } from "@aws-sdk/client-dynamodb";
import { isSequenceConflict, lastSequence, orderedActions } from "./outbox.js";
const client = new DynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL });
const key = "ORDER#conflict-ts";
const event = { id: process.env.EVENT_ID, partitionKey: key, source: "com.example.orders", detailType: "OrderPlaced", detail: {} };
async function write(last: number): Promise<string> {
  const items = orderedActions("shop", key, last, [event]);
  try {
    await client.send(new TransactWriteItemsCommand({ TransactItems: items }));
    return "written";
  } catch (err) {
    return isSequenceConflict(err, items) ? "conflict" : "refused";
  }
}
async function main() {
  const first = await write(0);
  const stale = await write(0);
  const again = await write(await lastSequence(client, "shop", key));
  console.log(first, stale, again);
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
`

// conflictPython is conflictTS in Python.
const conflictPython = `import os
import boto3
from botocore.exceptions import ClientError
from outbox_contract import is_sequence_conflict, last_sequence, ordered_actions

dynamodb = boto3.client("dynamodb", endpoint_url=os.environ.get("AWS_ENDPOINT_URL"))
key = "ORDER#conflict-py"
event = {"event_id": os.environ["EVENT_ID"], "partition_key": key, "source": "com.example.orders",
         "detail_type": "OrderPlaced", "detail": {}}

def write(last):
    items = ordered_actions("shop", key, last, [event])
    try:
        dynamodb.transact_write_items(TransactItems=items)
        return "written"
    except ClientError as err:
        return "conflict" if is_sequence_conflict(err, items) else "refused"

first = write(0)
stale = write(0)
print(first, stale, write(last_sequence(dynamodb, "shop", key)))
`

// checkConflictHelpers runs conflictTS and conflictPython against the
// stack: the guide's isSequenceConflict and is_sequence_conflict tell a
// stale sequence from another refusal.
func checkConflictHelpers(t *testing.T, endpoint string) {
	t.Run("ts", func(t *testing.T) {
		t.Parallel()
		js := jsWorkDir(t)
		writeGuideFile(t, "record-contract.md", "outbox.ts", js)
		writeFile(t, js, "conflict.ts", conflictTS)
		compileTS(t, js, "module", "outbox.ts", "conflict.ts")
		out := run(t, js, clientEnv(endpoint, "EVENT_ID="+contractFirstID), "node", "conflict.js")
		if strings.TrimSpace(out) != "written conflict refused" {
			t.Errorf("TypeScript: %q, want the first write, a conflict, then a refusal that is no conflict", out)
		}
	})
	t.Run("python", func(t *testing.T) {
		t.Parallel()
		py := t.TempDir()
		writeGuideFile(t, "record-contract.md", "outbox_contract.py", py)
		writeFile(t, py, "conflict.py", conflictPython)
		out := run(t, py, clientEnv(endpoint, "EVENT_ID="+contractSecondID), debianPython, filepath.Join(py, "conflict.py"))
		if strings.TrimSpace(out) != "written conflict refused" {
			t.Errorf("Python: %q, want the first write, a conflict, then a refusal that is no conflict", out)
		}
	})
}
