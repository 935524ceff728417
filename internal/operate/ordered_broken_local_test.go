package operate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// brokenDetail is a detail that breaks the record contract: not an object.
const brokenDetail = `["not","an","object"]`

// TestOrderedBrokenEventListedSkippedRequeued: on an ordered pipeline, two
// keys each get events 1 to 3 from the writer, event 4 written by the
// record contract's protocol by hand with a detail that is not a JSON
// object, and events 5 to 10. The relay marks each event 4 FAILED and holds
// 5 to 10. `outbox failed` lists both broken events (id, key, why, how many
// wait behind), `outbox status` exits 1 with both keys in failed.keys and a
// problem line naming each and the fix; requeue refuses a broken event.
// Skip releases one key; the other's item is fixed and requeued: the
// reconciler then publishes every held event, each key in order.
func TestOrderedBrokenEventListedSkippedRequeued(t *testing.T) {
	t.Parallel()
	d := deployQueueTarget(t, "broken-target.fifo", provision.Spec{Name: "broken", Ordered: true})
	got := d.consume(targetkind.QueueURL(d.spec.Target.QueueARN))
	const skipped, fixed = "acct-skip", "acct-fix"
	broken, behind := map[string]outbox.Record{}, map[string][]outbox.Record{}
	var published []outbox.Record
	for _, k := range []string{skipped, fixed} {
		for i := range 3 {
			published = append(published, d.write(orderedEvent(k, i))...)
		}
		broken[k] = d.writeBroken(orderedEvent(k, 3))
		for i := 4; i < 10; i++ {
			behind[k] = append(behind[k], d.write(orderedEvent(k, i))...)
		}
	}
	table := d.writer.Table()
	got.waitFor(t, idsOf(published))
	for _, r := range broken {
		waitUntil(t, "the broken event FAILED", func() bool { return d.status(table, r) == string(outbox.StatusFailed) })
	}

	checkBrokenListed(t, d, broken, behind)
	checkBrokenStatus(t, d, broken, behind)
	if _, errOut, code := d.run("requeue", "broken", "--id", broken[fixed].EventID); code != ExitUsage || !strings.Contains(errOut, "breaks the record contract") {
		t.Errorf("requeue of a broken event: exit %d, want %d and why: %q", code, ExitUsage, errOut)
	}
	if held := slices.Concat(behind[skipped], behind[fixed]); slices.ContainsFunc(held, func(r outbox.Record) bool { return got.ids()[r.EventID] > 0 }) {
		t.Fatal("an event behind a broken event was delivered while its key is held")
	}
	checkWaitingReported(t, d, len(behind[skipped])+len(behind[fixed]))

	if out, errOut, code := d.run("skip", "broken", "--event-id", broken[skipped].EventID, "--yes"); code != ExitOK {
		t.Fatalf("skip of the broken event: exit %d:\n%s%s", code, out, errOut)
	}
	if s := d.status(table, broken[skipped]); s != string(outbox.StatusSkipped) {
		t.Errorf("the skipped broken event is %s, want SKIPPED", s)
	}
	d.update(&dynamodb.UpdateItemInput{
		TableName: aws.String(table.Name), Key: table.Key(broken[fixed]),
		UpdateExpression:          aws.String("SET #detail = :detail"),
		ExpressionAttributeNames:  map[string]string{"#detail": outbox.AttrDetail},
		ExpressionAttributeValues: map[string]types.AttributeValue{":detail": &types.AttributeValueMemberS{Value: `{"i":3}`}},
	})
	if out, errOut, code := d.run("requeue", "broken", "--id", broken[fixed].EventID, "--now"); code != ExitOK {
		t.Fatalf("requeue --now of the fixed event: exit %d:\n%s%s", code, out, errOut)
	}
	got.waitFor(t, idsOf(slices.Concat([]outbox.Record{broken[fixed]}, behind[skipped], behind[fixed])))
	if seqs := got.sequences(skipped); !slices.Equal(seqs, []int64{1, 2, 3, 5, 6, 7, 8, 9, 10}) {
		t.Errorf("key %s received %v, want 1 to 10 in order without the skipped 4", skipped, seqs)
	}
	if seqs := got.sequences(fixed); !slices.Equal(seqs, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Errorf("key %s received %v, want 1 to 10 in order", fixed, seqs)
	}
	if keys := d.heldKeys(); len(keys) != 0 {
		t.Errorf("after skip and requeue, status --json failed.keys = %+v, want none", keys)
	}
}

// checkBrokenListed checks `outbox failed`, with and without --json, on
// the broken events.
func checkBrokenListed(t *testing.T, d *deployed, broken map[string]outbox.Record, behind map[string][]outbox.Record) {
	t.Helper()
	out, errOut, code := d.run("failed", "broken", "--json")
	var list FailedList
	parseJSON(t, out, &list)
	if code != ExitOK || list.Broken != 2 || len(list.Events) != 2 {
		t.Fatalf("failed --json: exit %d, %d events, broken %d; want both broken events listed:\n%s%s", code, len(list.Events), list.Broken, out, errOut)
	}
	for _, e := range list.Events {
		r, want := e.Record, broken[e.Record.OrderingKey]
		if r.EventID != want.EventID || r.Sequence != 4 || !e.HoldsKey || e.WaitingBehind != int64(len(behind[r.OrderingKey])) ||
			!strings.Contains(e.Broken, outbox.AttrDetail) || r.PartitionKey != want.PartitionKey || r.SortKey != want.SortKey {
			t.Errorf("failed --json lists %+v, want event %s, event 4 of %q, %d behind it, broken because of its detail",
				e, want.EventID, want.OrderingKey, len(behind[want.OrderingKey]))
		}
	}
	text, _, _ := d.run("failed", "broken")
	for k, r := range broken {
		for _, want := range []string{r.EventID + " breaks the record contract: ", "ordering key " + k + ": " + r.EventID + " is event 4, 6 events wait behind it"} {
			if !strings.Contains(text, want) {
				t.Errorf("failed does not say %q:\n%s", want, text)
			}
		}
	}
}

// checkBrokenStatus checks `outbox status --json` on the broken events.
func checkBrokenStatus(t *testing.T, d *deployed, broken map[string]outbox.Record, behind map[string][]outbox.Record) {
	t.Helper()
	out, _, code := d.run("status", "broken", "--json")
	var s Status
	parseJSON(t, out, &s)
	if code != ExitStuck || s.Failed.Total != 2 || s.Failed.Broken != 2 || len(s.Failed.Keys) != 2 {
		t.Fatalf("status --json: exit %d, failed %+v; want exit %d with both keys held", code, s.Failed, ExitStuck)
	}
	problems := strings.Join(s.Problems, "\n")
	for _, k := range s.Failed.Keys {
		r := broken[k.OrderingKey]
		if k.EventID != r.EventID || k.Sequence != 4 || k.WaitingBehind != int64(len(behind[k.OrderingKey])) || k.BrokenBecause == "" {
			t.Errorf("status --json failed.keys has %+v, want key %s held by the broken event %s", k, r.OrderingKey, r.EventID)
		}
		if !strings.Contains(problems, "ordering key "+k.OrderingKey+" is held by its FAILED event "+r.EventID+" (event 4), whose item breaks the record contract") ||
			!strings.Contains(problems, "outbox skip broken --event-id "+r.EventID+" --yes") {
			t.Errorf("status problems do not name %s's broken event and the fix:\n%s", k.OrderingKey, problems)
		}
	}
}

// checkWaitingReported runs the reconciler through `outbox requeue --now`,
// which selects no event (the FAILED ones are broken): the run publishes
// nothing and leaves held events pending behind their keys, which its
// report, the command's exit code and `outbox status` count as waiting.
func checkWaitingReported(t *testing.T, d *deployed, held int) {
	t.Helper()
	out, errOut, code := d.run("requeue", "broken", "--now", "--json")
	var res RequeueOutput
	parseJSON(t, out, &res)
	r := res.Reconciler
	if code != ExitStuck || res.Selected != 0 || res.Broken != 2 || r == nil || len(r.Runs) == 0 || r.Waiting != held || r.Runs[0].Waiting != held ||
		r.Runs[0].Found != held || r.Runs[0].Published != 0 || !strings.Contains(errOut, "behind an earlier event of their ordering key") {
		t.Errorf("requeue --now with every key held: exit %d, %+v, reconciler %+v, stderr %q; want exit %d and %d waiting", code, res, r, errOut, ExitStuck, held)
	}
	want := fmt.Sprintf("waiting %d behind their ordering keys", held)
	waitUntil(t, "status reporting the reconciler's run with the waiting events", func() bool {
		text, _, _ := d.run("status", "broken")
		return strings.Contains(text, want)
	})
}

// writeBroken writes e as the record contract's protocol does by hand (the
// key's sequence item advanced and the item put, in one transaction), with
// a detail that is not a JSON object, and returns its record.
func (d *deployed) writeBroken(e outbox.Event) outbox.Record {
	d.t.Helper()
	last, err := d.writer.LastSequences(d.ctx, e.OrderingKey)
	if err != nil {
		d.t.Fatal(err)
	}
	actions, recs, err := d.writer.ActionsAfter(last, nil, e)
	if err != nil {
		d.t.Fatal(err)
	}
	actions[0].Put.Item[outbox.AttrDetail] = &types.AttributeValueMemberS{Value: brokenDetail}
	if _, err := d.ddb.TransactWriteItems(d.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}); err != nil {
		d.t.Fatalf("writing the broken event: %v", err)
	}
	return recs[0]
}

// sequences returns the sequences of key's events in the order they first
// arrived.
func (c *consumer) sequences(key string) []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int64
	for _, e := range c.seen {
		if m := e.Detail.Metadata; m.OrderingKey == key && !slices.Contains(out, m.Sequence) {
			out = append(out, m.Sequence)
		}
	}
	return out
}
