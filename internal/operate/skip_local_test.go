package operate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Three FAILED ordered events of one key on an ordered pipeline: failed
// and status show the key and what waits behind each; skip shows and
// changes nothing without --yes, refuses an event that is not the key's
// next, and with --yes marks the next one SKIPPED and moves the cursor past
// it, once.
func TestLocalSkip(t *testing.T) {
	t.Parallel()
	d := deployQueueTarget(t, "skip-target.fifo", provision.Spec{Name: "skip", Ordered: true})
	table := d.writer.Table()
	events := d.putFailedOrdered("com.example.skip", "acct-1", 3)
	plain := d.putFailed(1, "com.example.skip", func(int) string { return "EventBridge: MalformedDetail" })[0]

	if _, errOut, code := d.run("skip", "skip"); code != ExitUsage || !strings.Contains(errOut, "--event-id") {
		t.Errorf("skip without --event-id: exit %d, %q", code, errOut)
	}
	if _, errOut, code := d.run("skip", "skip", "--event-id", plain.EventID, "--yes"); code != ExitUsage || !strings.Contains(errOut, "not an ordered event") {
		t.Errorf("skip of an unordered event: exit %d, %q", code, errOut)
	}
	out, _, code := d.run("skip", "skip", "--event-id", events[0].EventID)
	if code != ExitOK || !strings.Contains(out, "would skip event "+events[0].EventID) || !strings.Contains(out, "is event 1, 2 events wait behind it") {
		t.Errorf("skip without --yes: exit %d:\n%s", code, out)
	}
	if got := d.status(table, events[0]); got != string(outbox.StatusFailed) {
		t.Fatalf("skip without --yes left the event %s, want FAILED", got)
	}
	if _, errOut, code := d.run("skip", "skip", "--event-id", events[1].EventID, "--yes"); code != ExitStuck || !strings.Contains(errOut, "next event to publish is 1") {
		t.Errorf("skip of event 2 while 1 is next: exit %d, %q", code, errOut)
	}

	out, errOut, code := d.run("skip", "skip", "--event-id", events[0].EventID, "--yes", "--json")
	var res SkipOutput
	parseJSON(t, out, &res)
	if code != ExitOK || !res.Skipped || res.DryRun || res.Event.Record.EventID != events[0].EventID || res.Event.WaitingBehind != 2 || !strings.Contains(errOut, "skipped event "+events[0].EventID) {
		t.Fatalf("skip --yes --json: exit %d, %+v, stderr %q", code, res, errOut)
	}
	if got := d.status(table, events[0]); got != string(outbox.StatusSkipped) {
		t.Errorf("skipped event is %s, want SKIPPED", got)
	}
	c, err := d.cursor(table, "acct-1")
	if err != nil || c.Published != 1 {
		t.Errorf("cursor after skip: %+v, %v; want at 1", c, err)
	}
	if _, _, code := d.run("skip", "skip", "--event-id", events[0].EventID, "--yes"); code != ExitNotFound {
		t.Errorf("skipping it again: exit %d, want %d", code, ExitNotFound)
	}

	out, _, _ = d.run("status", "skip", "--json")
	var s Status
	parseJSON(t, out, &s)
	if len(s.Failed.Keys) != 1 || s.Failed.Keys[0] != (HeldKey{OrderingKey: "acct-1", EventID: events[1].EventID, Sequence: 2, WaitingBehind: 1}) {
		t.Errorf("status --json failed.keys = %+v, want acct-1 held by event 2 with 1 behind it", s.Failed.Keys)
	}
	if !strings.Contains(strings.Join(s.Problems, "\n"), "outbox skip skip --event-id "+events[1].EventID) {
		t.Errorf("status problems do not say how to release the key: %v", s.Problems)
	}

	// The key's cursor moved past the FAILED events (as the reconciler
	// starts a key at its lowest pending event): they hold nothing.
	d.update(&dynamodb.UpdateItemInput{
		TableName: aws.String(table.Name), Key: table.CursorKey("acct-1"),
		UpdateExpression:          aws.String("SET #pub = :pub"),
		ExpressionAttributeNames:  map[string]string{"#pub": outbox.AttrPublishedSequence},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pub": nAttrOf(3)},
	})
	out, _, _ = d.run("status", "skip", "--json")
	s = Status{}
	parseJSON(t, out, &s)
	if len(s.Failed.Keys) != 0 {
		t.Errorf("status --json with the cursor past the FAILED events: keys %+v, want none held", s.Failed.Keys)
	}
	if _, errOut, code := d.run("skip", "skip", "--event-id", events[1].EventID, "--yes"); code != ExitUsage || !strings.Contains(errOut, "whose cursor is already past it") {
		t.Errorf("skip of an event its cursor passed: exit %d, %q", code, errOut)
	}
}

// On a pipeline without ordered mode, FAILED events written with an
// ordering key hold nothing: the relay published the events written after
// them. failed lists their key and sequence without anything waiting,
// status shows no key held, and skip refuses them, saying why.
func TestLocalUnorderedPipelineHoldsNoKey(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "unordered-keys"})
	events := d.putFailedOrdered("com.example.unordered", "acct-1", 2)

	out, _, code := d.run("failed", "unordered-keys", "--json")
	var list FailedList
	parseJSON(t, out, &list)
	if code != ExitOK || len(list.Events) != 2 {
		t.Fatalf("failed --json: exit %d:\n%s", code, out)
	}
	for _, e := range list.Events {
		if e.HoldsKey || e.WaitingBehind != 0 || e.Record.OrderingKey != "acct-1" || e.Record.Sequence == 0 || strings.Contains(out, "waitingBehind") {
			t.Errorf("failed --json on an unordered pipeline lists %+v: want its key and sequence, nothing waiting behind it", e)
		}
	}
	if text, _, _ := d.run("failed", "unordered-keys"); strings.Contains(text, "wait behind it") {
		t.Errorf("failed on an unordered pipeline says events wait:\n%s", text)
	}
	out, _, _ = d.run("status", "unordered-keys", "--json")
	var s Status
	parseJSON(t, out, &s)
	if len(s.Failed.Keys) != 0 || strings.Contains(strings.Join(s.Problems, "\n"), "ordering key") {
		t.Errorf("status --json on an unordered pipeline: keys %+v, problems %v; want no key held", s.Failed.Keys, s.Problems)
	}
	_, errOut, code := d.run("skip", "unordered-keys", "--event-id", events[0].EventID, "--yes")
	if code != ExitUsage || !strings.Contains(errOut, "does not publish in order") || !strings.Contains(errOut, "outbox requeue unordered-keys --id "+events[0].EventID) {
		t.Errorf("skip on an unordered pipeline: exit %d, %q; want %d, why, and requeue", code, errOut, ExitUsage)
	}
	if got := d.status(d.writer.Table(), events[0]); got != string(outbox.StatusFailed) {
		t.Errorf("the refused skip left the event %s, want FAILED", got)
	}
}

// putFailedOrdered stores n FAILED events of the ordering key key, events
// 1 to n, and the key's sequence item at n.
func (d *deployed) putFailedOrdered(source, key string, n int) []outbox.Record {
	d.t.Helper()
	table := d.writer.Table()
	events := d.putFailed(n, source, func(int) string { return "SQS rejected the event: InvalidMessageContents" })
	for i, r := range events {
		d.setOrdering(table, r, key, i+1)
		events[i].OrderingKey, events[i].Sequence = key, int64(i+1)
	}
	seq := table.SequenceKey(key)
	seq[outbox.AttrSequence] = nAttrOf(n)
	if _, err := d.ddb.PutItem(d.ctx, &dynamodb.PutItemInput{TableName: aws.String(table.Name), Item: seq}); err != nil {
		d.t.Fatal(err)
	}
	return events
}

func nAttrOf(n int) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(n)}
}

// update makes one UpdateItem.
func (d *deployed) update(in *dynamodb.UpdateItemInput) {
	d.t.Helper()
	if _, err := d.ddb.UpdateItem(d.ctx, in); err != nil {
		d.t.Fatalf("updating an item: %v", err)
	}
}

// setOrdering makes r's item the event seq of the ordering key key.
func (d *deployed) setOrdering(table outbox.Table, r outbox.Record, key string, seq int) {
	d.t.Helper()
	d.update(&dynamodb.UpdateItemInput{
		TableName: aws.String(table.Name), Key: table.Key(r),
		UpdateExpression:          aws.String("SET #key = :key, #seq = :seq"),
		ExpressionAttributeNames:  map[string]string{"#key": outbox.AttrOrderingKey, "#seq": outbox.AttrSequence},
		ExpressionAttributeValues: map[string]types.AttributeValue{":key": &types.AttributeValueMemberS{Value: key}, ":seq": nAttrOf(seq)},
	})
}

// status returns the status of r's item.
func (d *deployed) status(table outbox.Table, r outbox.Record) string {
	d.t.Helper()
	out, err := d.ddb.GetItem(d.ctx, &dynamodb.GetItemInput{TableName: aws.String(table.Name), Key: table.Key(r), ConsistentRead: aws.Bool(true)})
	if err != nil {
		d.t.Fatal(err)
	}
	s, _ := out.Item[outbox.AttrStatus].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// cursor reads an ordering key's cursor.
func (d *deployed) cursor(table outbox.Table, key string) (outbox.Cursor, error) {
	return (&Clients{DynamoDB: d.ddb}).cursor(d.ctx, table, key)
}
