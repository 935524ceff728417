package chaos

import (
	"strings"
	"testing"
	"time"
)

func TestTallyResult(t *testing.T) {
	t.Parallel()
	tl := NewTally()
	at := time.Unix(100, 0)
	for _, id := range []string{"a", "b", "c"} {
		tl.Written(id)
	}
	tl.Poison("p")
	tl.Received("a", at)
	tl.Received("a", at.Add(time.Second))
	tl.Received("b", at)
	tl.Received("x", at)
	r := tl.Result()
	want := Result{Written: 3, Delivered: 2, Lost: 1, Duplicates: 1, PoisonInjected: 1, Unknown: 1}
	if r != want {
		t.Errorf("result = %+v, want %+v", r, want)
	}
	if w, d := tl.Progress(); w != 3 || d != 2 {
		t.Errorf("progress = %d, %d; want 3, 2", w, d)
	}
	if lost := tl.Lost(10); len(lost) != 1 || lost[0] != "c" {
		t.Errorf("lost = %v, want [c]", lost)
	}
	if got := tl.LastReceive(); !got.Equal(at.Add(time.Second)) {
		t.Errorf("last receive = %v", got)
	}
	tl.Received("p", at)
	if r := tl.Result(); r.PoisonDelivered != 1 || r.Duplicates != 1 {
		t.Errorf("after a poison delivery: %+v", r)
	}
	dups := tl.Duplicates(10)
	if len(dups) != 1 || dups[0].ID != "a" || !dups[0].First.Equal(at) || len(dups[0].Repeats) != 1 || !dups[0].Repeats[0].Equal(at.Add(time.Second)) {
		t.Errorf("duplicates = %+v, want a, first at %v, again a second later", dups, at)
	}
	if got := tl.Duplicates(0); len(got) != 0 {
		t.Errorf("Duplicates(0) = %+v", got)
	}
}

func TestResultCheck(t *testing.T) {
	t.Parallel()
	good := Result{Written: 10, Delivered: 10, Duplicates: 3, Kills: 2, DuplicateBound: 4, PoisonInjected: 2, FailedPoison: 2, DLQ: 1, Drain: 1500 * time.Millisecond}
	if err := good.Check(); err != nil {
		t.Errorf("a clean run fails: %v", err)
	}
	if got, want := good.Line(), "chaos: written=10 delivered=10 lost=0 duplicates=3 dup_pct=30.00 kills=2 stranded=0 failed_poison=2 dlq=1 drain_s=1.5"; got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
	named := good
	named.Target = "sns-fifo"
	if got, want := named.Line(), "chaos: target=sns-fifo written=10 delivered=10 lost=0 duplicates=3 dup_pct=30.00 kills=2 stranded=0 failed_poison=2 dlq=1 drain_s=1.5"; got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
	fifo := Result{Written: 1000, Delivered: 1000, Duplicates: 5, Kills: 2, DuplicateBound: 50, PoisonInjected: 2, FailedPoison: 2, FIFO: true}
	if err := fifo.Check(); err != nil {
		t.Errorf("a FIFO run with 0.5 %% duplicates fails: %v", err)
	}
	checkBreaches(t, good, Result.Check, map[string]breach[Result]{
		"lost":             {func(r *Result) { r.Delivered, r.Lost = 9, 1 }, "1 of 10 written events were never delivered"},
		"poison not set":   {func(r *Result) { r.FailedPoison = 1 }, "1 items are FAILED, want the 2 poison events"},
		"extra failed":     {func(r *Result) { r.FailedPoison = 3 }, "3 items are FAILED"},
		"poison delivered": {func(r *Result) { r.PoisonDelivered = 1 }, "1 poison events were delivered"},
		"unknown":          {func(r *Result) { r.Unknown = 2 }, "2 events were delivered that were never written"},
		"stranded":         {func(r *Result) { r.Stranded = 1 }, "1 valid events are still PENDING or FAILED"},
		"duplicates":       {func(r *Result) { r.Duplicates = 5 }, "5 duplicates, more than the 4 that 2 kills explain"},
		"fifo duplicates": {func(r *Result) { r.Written, r.Delivered, r.DuplicateBound, r.FIFO = 400, 400, 10, true },
			"3 duplicates reached the FIFO consumer, 0.75 % of the 400 events, more than the 0.5 %"},
		"nothing written": {func(r *Result) { r.Written, r.Delivered = 0, 0 }, "no event was written"},
		"no poison":       {func(r *Result) { r.PoisonInjected, r.FailedPoison = 0, 0 }, "no poison event was injected"},
	})
}

// breach is a change that breaks a clean result, and what its check must
// then report.
type breach[R any] struct {
	change func(*R)
	want   string
}

// checkBreaches applies each breach to a copy of good and fails when check
// does not report it.
func checkBreaches[R any](t *testing.T, good R, check func(R) error, breaches map[string]breach[R]) {
	t.Helper()
	for name, b := range breaches {
		r := good
		b.change(&r)
		if err := check(r); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: Check() = %v, want an error containing %q", name, err, b.want)
		}
	}
}

func TestWithoutAction(t *testing.T) {
	t.Parallel()
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["events:PutEvents","dynamodb:UpdateItem"],"Resource":"*"},{"Effect":"Allow","Action":"events:PutEvents","Resource":"arn:bus"}]}`
	got, err := withoutAction(doc, "events:PutEvents")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "events:PutEvents") || !strings.Contains(got, "dynamodb:UpdateItem") || strings.Contains(got, "arn:bus") {
		t.Errorf("policy without PutEvents = %s", got)
	}
	if _, err := withoutAction(got, "events:PutEvents"); err == nil {
		t.Error("removing an action no statement grants succeeded")
	}
}
