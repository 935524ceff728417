package provider

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// switchKeys are the aggregates of the ordering switch test.
var switchKeys = []string{"ACCOUNT#a", "ACCOUNT#b", "ACCOUNT#c"}

// TestAccPipeline_orderingSwitched: ordered mode switched on, and off
// again, while events wait unpublished, strands nothing.
//
// The pipeline on an SQS FIFO queue runs unordered; an operator disables
// its event source mapping, and ordered events are written meanwhile (each
// key's events one transaction at a time, and three of one key in one
// transaction). The apply that switches ordering on also repairs the
// mapping it manages (a disabled mapping is drift): every pending event
// then arrives exactly once, in its key's group, in sequence; every item is
// marked PUBLISHED, each key's cursor ends at its last event, and a
// reconciler run finds nothing pending. The same holds, order aside (that
// is what switching off gives up), when ordering is switched off with
// events pending.
//
// Each key's first pending event here is its sequence 1, so the keys
// resume at once. A key whose first events were published before ordered
// mode (it has no cursor) or while it was off (its cursor stayed behind)
// resumes from a reconciler run once its lowest pending event is
// reconcile.MinStartAge old: internal/relay's TestOrderedKeyStartsWithoutCursor
// and TestOrderedKeyResumesAfterOrderedModeWasOff cover those cases.
func TestAccPipeline_orderingSwitched(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("ordswitch")
	sink := e.NewFIFOQueue(e.Name("acc-ordswitch")+".fifo", nil)
	before := e.Snapshot()
	config := func(ordered bool) string {
		return e.PipelineConfig(f.name, fastRelayMapping+fmt.Sprintf(`
  reconciler = {
    schedule_expression = "rate(1 hour)"
  }
  target   = { queue_arn = %q }
  ordering = { enabled = %t }`, sink.QueueARN, ordered))
	}
	var pending []outbox.Record
	switched := func(from, to bool) []plancheck.PlanCheck {
		return []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
			expectChange{block: "ordering", attr: "enabled", before: from, after: to},
		}
	}
	var uuid string
	stopAndWrite := func(from int) func() {
		return func() { pending = e.writeWhileRelayStopped(t, uuid, f, from) }
	}
	// delivered checks what the queue received of the pending events with
	// check, and that none of them is stranded.
	delivered := func(check func([]outbox.Record, []acctest.FIFOMessage) error) error {
		got, err := sink.ReceiveFIFO(pending)
		if err != nil {
			return err
		}
		if err := check(pending, got); err != nil {
			return err
		}
		return e.checkNothingStranded(f, pending)
	}
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{
		{
			Config: config(false),
			Check: func(st *terraform.State) error {
				uuid = stateAttr(st, "event_source_mapping_uuid")
				return nil
			},
		},
		{
			PreConfig:         stopAndWrite(1),
			Config:            config(true),
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: switched(false, true)},
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(accResource, attrPath("ordering.enabled"), knownvalue.Bool(true))},
			Check: func(*terraform.State) error {
				if err := delivered(acctest.CheckFIFO); err != nil {
					return err
				}
				return e.checkCursorsAtLast(f.table, pending)
			},
		},
		{
			PreConfig:         stopAndWrite(100),
			Config:            config(false),
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: switched(true, false)},
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(accResource, attrPath("ordering.enabled"), knownvalue.Bool(false))},
			Check:             func(*terraform.State) error { return delivered(checkEachOnce) },
		},
		{
			// A mapping disabled by hand, with no setting changed, plans
			// the update that enables it again.
			PreConfig:        func() { e.disableMapping(t, uuid) },
			Config:           config(false),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate)}},
		},
		emptyPlanStep(config(false)),
	})
}

// writeWhileRelayStopped disables the event source mapping uuid, as an
// operator pausing the relay would, writes the ordered events of
// writeOrderedBatches (orders numbered from `from`) and returns their
// records, their items PENDING.
func (e *accEnv) writeWhileRelayStopped(t *testing.T, uuid string, f fixture, from int) []outbox.Record {
	t.Helper()
	e.disableMapping(t, uuid)
	records, err := e.writeOrderedBatches(f, from)
	if err != nil {
		t.Fatalf("writing ordered events while the relay is stopped: %v", err)
	}
	return records
}

// disableMapping disables the event source mapping uuid out of band and
// waits until it is Disabled.
func (e *accEnv) disableMapping(t *testing.T, uuid string) { e.setMapping(t, uuid, false) }

// setMapping enables or disables the event source mapping uuid out of band
// and waits until it is Enabled or Disabled.
func (e *accEnv) setMapping(t *testing.T, uuid string, enabled bool) {
	t.Helper()
	lc := lambda.NewFromConfig(e.Cfg)
	want := map[bool]string{true: "Enabled", false: "Disabled"}[enabled]
	e.outOfBand(t, "setting the event source mapping "+want,
		sdkCall(e.Ctx, lc.UpdateEventSourceMapping, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(uuid), Enabled: aws.Bool(enabled)}),
		"the mapping "+want, func() error {
			out, err := lc.GetEventSourceMapping(e.Ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)})
			if err != nil {
				return err
			}
			if state := aws.ToString(out.State); state != want {
				return fmt.Errorf("state %s", state)
			}
			return nil
		})
}

// writeOrderedBatches writes, with an ordered writer, two events of each
// key one transaction at a time, round by round, then three events of the
// first key in one transaction, then one more of each key: 4 events of two
// keys and 6 of the first. It returns the records in the order written.
func (e *accEnv) writeOrderedBatches(f fixture, from int) ([]outbox.Record, error) {
	w, err := outbox.NewWriter(dynamodb.NewFromConfig(e.Cfg), f.table, outbox.WithOrdering())
	if err != nil {
		return nil, err
	}
	n := from
	event := func(key string) outbox.Event {
		n++
		return outbox.Event{PartitionKey: key, Source: "com.example.accounts", DetailType: "BalanceChanged",
			Detail: json.RawMessage(fmt.Sprintf(`{"account":%q,"n":%d}`, key, n))}
	}
	var txs [][]outbox.Event
	for range 2 {
		for _, k := range switchKeys {
			txs = append(txs, []outbox.Event{event(k)})
		}
	}
	first := switchKeys[0]
	txs = append(txs, []outbox.Event{event(first), event(first), event(first)})
	for _, k := range switchKeys {
		txs = append(txs, []outbox.Event{event(k)})
	}
	var records []outbox.Record
	for i, tx := range txs {
		order := from + i
		rs, err := w.Write(e.Ctx, []ddbtypes.TransactWriteItem{acctest.OrderItem(f.orders, tx[0].PartitionKey, fmt.Sprintf("TX#%d", order), order)}, tx...)
		if err != nil {
			return nil, fmt.Errorf("writing transaction %d: %w", i, err)
		}
		records = append(records, rs...)
	}
	return records, nil
}

// checkNothingStranded waits until every record's item is marked PUBLISHED
// (out of the pending index), then checks that a reconciler run with no
// minimum age finds nothing pending in the table.
func (e *accEnv) checkNothingStranded(f fixture, records []outbox.Record) error {
	if err := e.waitMarked(f.table, records); err != nil {
		return err
	}
	report, err := e.reconcileReport(f.name + "-reconciler")
	if err != nil {
		return err
	}
	if report.Found != 0 || report.Waiting != 0 || !report.Complete {
		return fmt.Errorf("reconciler report %+v: want a complete sweep that finds nothing pending", report)
	}
	return nil
}

// reconcileReport invokes the reconciler for every pending event, whatever
// its age, and returns its report.
func (e *accEnv) reconcileReport(function string) (reconcile.Report, error) {
	var report reconcile.Report
	payload, err := e.invokeReconciler(function, reconcileAll)
	if err != nil {
		return report, err
	}
	if err := json.Unmarshal(payload, &report); err != nil {
		return report, fmt.Errorf("the report of %s %q: %w", function, payload, err)
	}
	return report, nil
}

// checkCursorsAtLast checks that the cursor item of each ordering key of
// records says its last sequence among them is published.
func (e *accEnv) checkCursorsAtLast(table outbox.Table, records []outbox.Record) error {
	last := map[string]int64{}
	for _, r := range records {
		last[r.OrderingKey] = max(last[r.OrderingKey], r.Sequence)
	}
	table = table.WithDefaults()
	c := dynamodb.NewFromConfig(e.Cfg)
	for key, seq := range last {
		out, err := c.GetItem(e.Ctx, &dynamodb.GetItemInput{TableName: aws.String(table.Name), Key: table.CursorKey(key), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("reading the cursor of %s: %w", key, err)
		}
		cur, err := outbox.ParseCursor(out.Item)
		if err != nil {
			return err
		}
		if cur.Published != seq || cur.IsBlocked() {
			return fmt.Errorf("the cursor of %s: %+v, want published up to %d, not blocked", key, cur, seq)
		}
	}
	return nil
}

// checkEachOnce checks that the FIFO queue delivered every event of want
// once, in its key's group; order is not checked.
func checkEachOnce(want []outbox.Record, got []acctest.FIFOMessage) error {
	byID := map[string]outbox.Record{}
	for _, r := range want {
		byID[r.EventID] = r
	}
	for _, m := range got {
		id := m.Detail.Metadata.EventID
		r, ok := byID[id]
		if !ok {
			return fmt.Errorf("event %s arrived, or arrived twice, unexpectedly", id)
		}
		if m.GroupID != r.OrderingKey {
			return fmt.Errorf("event %s arrived in group %q, want %q", id, m.GroupID, r.OrderingKey)
		}
		delete(byID, id)
	}
	if len(byID) > 0 {
		return fmt.Errorf("%d events not delivered", len(byID))
	}
	return nil
}
