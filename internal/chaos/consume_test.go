package chaos

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
)

func TestConsumeResultCheck(t *testing.T) {
	t.Parallel()
	good := ConsumeResult{Events: 10, EffectsOnce: 10, Redelivered: 3, Kills: 2, Takeovers: 1, MismatchesInjected: 2, MismatchesDetected: 2,
		DLQ: 3, DeadLetteredApplied: 1, Drain: 1500 * time.Millisecond}
	if err := good.Check(2, 30); err != nil {
		t.Errorf("a clean run fails: %v", err)
	}
	leaseless := good
	leaseless.EffectsOnly, leaseless.Takeovers = true, 0
	if err := leaseless.Check(2, 30); err != nil {
		t.Errorf("a clean lease-less run fails: %v", err)
	}
	want := "consume: events=10 effects_once=10 redelivered=3 kills=2 takeovers=1 mismatches_injected=2 mismatches_detected=2 lost=0 wrong=0 unfinished=0 dlq=3 dlq_applied=1 run_s=1.5"
	if got := good.Line(); got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
	check := func(r ConsumeResult) error { return r.Check(2, 30) }
	checkBreaches(t, good, check, map[string]breach[ConsumeResult]{
		"lost":                {func(r *ConsumeResult) { r.EffectsOnce, r.Lost = 9, 1 }, "1 events never had their effect"},
		"applied twice":       {func(r *ConsumeResult) { r.EffectsOnce, r.Wrong = 9, 1 }, "9 of 10 events had their effect exactly once"},
		"stray effect":        {func(r *ConsumeResult) { r.Wrong = 1 }, "1 effects happened more than once"},
		"unfinished":          {func(r *ConsumeResult) { r.Unfinished = 1 }, "1 inbox entries are not COMPLETED"},
		"mismatch missed":     {func(r *ConsumeResult) { r.MismatchesDetected = 1 }, "1 of 2 reused ids were detected"},
		"no reused id":        {func(r *ConsumeResult) { r.MismatchesInjected, r.MismatchesDetected = 0, 0 }, "no id was reused"},
		"too few kills":       {func(r *ConsumeResult) { r.Kills = 1 }, "1 consumer processes were killed, want 2"},
		"no takeover":         {func(r *ConsumeResult) { r.Takeovers = 0 }, "no lease was taken over"},
		"lease-less takeover": {func(r *ConsumeResult) { r.EffectsOnly = true }, "1 leases were taken over"},
		"few redeliveries":    {func(r *ConsumeResult) { r.Redelivered = 2 }, "2 of 10 events were delivered again, fewer than 30 %"},
		"nothing published":   {func(r *ConsumeResult) { r.Events, r.EffectsOnce = 0, 0 }, "no event was published"},
	})
}

// The consumer's effect adds one to the event's counter and records the
// payload it was applied with.
func TestEffect(t *testing.T) {
	t.Parallel()
	e := consumer.Event[Order]{ID: "01EVENT", PayloadHash: "abc", Data: Order{OrderID: "o-1", Amount: 42}, RawData: json.RawMessage(`{}`)}
	u := Effect("ledger", e).Update
	if u == nil || *u.TableName != "ledger" || u.Key[LedgerKey].(*types.AttributeValueMemberS).Value != "COUNT#01EVENT" {
		t.Fatalf("effect = %+v", u)
	}
	if *u.UpdateExpression != "ADD #applied :one SET #hash = :hash, #amount = :amount" ||
		u.ExpressionAttributeValues[":hash"].(*types.AttributeValueMemberS).Value != "abc" ||
		u.ExpressionAttributeValues[":amount"].(*types.AttributeValueMemberN).Value != "42" {
		t.Errorf("effect = %s with %+v", *u.UpdateExpression, u.ExpressionAttributeValues)
	}
}
