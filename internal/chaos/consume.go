package chaos

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
)

// Order is the data of the consumer chaos suite's events.
type Order struct {
	OrderID string `json:"orderId"`
	Amount  int    `json:"amount"`
}

// The ledger's attributes: its key, how many times the event's effect was
// applied, and the payload hash and amount it was applied with.
const (
	LedgerKey     = "pk"
	LedgerApplied = "applied"
	LedgerHash    = "payloadHash"
	LedgerAmount  = "amount"
)

// LedgerKeyOf is the ledger key of an event's counter item.
func LedgerKeyOf(eventID string) string { return "COUNT#" + eventID }

// Effect is the consumer's effect of an event: its counter item in the
// ledger table grows by one, recording the payload it was applied with.
func Effect(ledger string, e consumer.Event[Order]) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                aws.String(ledger),
		Key:                      map[string]types.AttributeValue{LedgerKey: &types.AttributeValueMemberS{Value: LedgerKeyOf(e.ID)}},
		UpdateExpression:         aws.String("ADD #applied :one SET #hash = :hash, #amount = :amount"),
		ExpressionAttributeNames: map[string]string{"#applied": LedgerApplied, "#hash": LedgerHash, "#amount": LedgerAmount},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one":    &types.AttributeValueMemberN{Value: "1"},
			":hash":   &types.AttributeValueMemberS{Value: e.PayloadHash},
			":amount": &types.AttributeValueMemberN{Value: strconv.Itoa(e.Data.Amount)},
		},
	}}
}

// ConsumeResult is the outcome of a consumer chaos run (TestConsumeChaos).
type ConsumeResult struct {
	// Events counts the events published; EffectsOnce those whose effect
	// was applied exactly once, with their own payload; Lost those whose
	// effect never happened; Wrong those applied more than once or with
	// another payload, and effects of events never published.
	Events, EffectsOnce, Lost, Wrong int
	// Redelivered counts the events delivered more than once.
	Redelivered int
	// Kills counts consumer processes killed mid-invocation; Takeovers the
	// leases of killed attempts that a later attempt took over.
	Kills, Takeovers int
	// EffectsOnly says the consumer applied events without a lease
	// (consumer.EffectsOnly): a killed attempt leaves nothing to take over.
	EffectsOnly bool
	// MismatchesInjected counts the ids reused with another payload;
	// MismatchesDetected those the kit reported as payload mismatches and
	// whose impostor was dead-lettered, never applied.
	MismatchesInjected, MismatchesDetected int
	// Unfinished counts the events whose inbox entry is not COMPLETED.
	Unfinished int
	// DLQ counts the messages in the subscription's dead-letter queue:
	// the impostors, and copies of events whose effect had been applied
	// that were received maxReceiveCount times (DeadLetteredApplied
	// counts those events).
	DLQ, DeadLetteredApplied int
	// Drain is the time from the first event to quiescence.
	Drain time.Duration
}

// Line is the one-line summary the suite ends with.
func (r ConsumeResult) Line() string {
	return fmt.Sprintf("consume: events=%d effects_once=%d redelivered=%d kills=%d takeovers=%d mismatches_injected=%d mismatches_detected=%d lost=%d wrong=%d unfinished=%d dlq=%d dlq_applied=%d run_s=%.1f",
		r.Events, r.EffectsOnce, r.Redelivered, r.Kills, r.Takeovers, r.MismatchesInjected, r.MismatchesDetected, r.Lost, r.Wrong, r.Unfinished,
		r.DLQ, r.DeadLetteredApplied, r.Drain.Seconds())
}

// Check returns every violated guarantee: an effect not applied exactly
// once, an unfinished entry, a reused id not detected, or a run that did not
// inject what it must: fewer kills than kills, no takeover, fewer than
// redeliveredPercent of the events delivered again, no reused id.
func (r ConsumeResult) Check(kills, redeliveredPercent int) error {
	var v violations
	v.add(r.Events == 0, "no event was published")
	v.add(r.EffectsOnce != r.Events, "%d of %d events had their effect exactly once", r.EffectsOnce, r.Events)
	v.add(r.Lost != 0, "%d events never had their effect", r.Lost)
	v.add(r.Wrong != 0, "%d effects happened more than once, with another payload, or for no published event", r.Wrong)
	v.add(r.Unfinished != 0, "%d inbox entries are not COMPLETED", r.Unfinished)
	v.add(r.MismatchesInjected == 0, "no id was reused with another payload")
	v.add(r.MismatchesDetected != r.MismatchesInjected, "%d of %d reused ids were detected", r.MismatchesDetected, r.MismatchesInjected)
	v.add(r.Kills < kills, "%d consumer processes were killed, want %d", r.Kills, kills)
	v.add(r.EffectsOnly && r.Takeovers != 0, "%d leases were taken over by a consumer that takes none", r.Takeovers)
	v.add(!r.EffectsOnly && r.Takeovers == 0, "no lease was taken over: no kill left an event in progress")
	v.add(r.Redelivered*100 < r.Events*redeliveredPercent, "%d of %d events were delivered again, fewer than %d %%", r.Redelivered, r.Events, redeliveredPercent)
	return errors.Join(v...)
}
