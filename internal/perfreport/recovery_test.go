package perfreport

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestKeyEvents(t *testing.T) {
	for _, c := range []struct {
		n, keys, hot int
		share        float64
	}{{200_000, 1000, 10, 0.5}, {2000, 1000, 10, 0.5}, {1001, 7, 3, 0.3}, {10, 10, 10, 0.5}} {
		per := keyEvents(c.n, c.keys, c.hot, c.share)
		total, hot := 0, 0
		for k, n := range per {
			if n == 0 {
				t.Errorf("%+v: key %d has no event", c, k)
			}
			total += n
			if k < c.hot {
				hot += n
			}
		}
		if total != c.n || len(per) != c.keys {
			t.Errorf("%+v: %d events over %d keys", c, total, len(per))
		}
		if want := int(float64(c.n)*c.share + 0.5); c.hot < c.keys && hot != want {
			t.Errorf("%+v: hot keys hold %d events, want %d", c, hot, want)
		}
	}
}

func TestOverTheOutage(t *testing.T) {
	perKey := keyEvents(20_000, 100, 10, 0.5)
	const writers = 8
	seen := make(map[keyEvent]bool)
	for wr := range writers {
		events := overTheOutage(perKey, wr, writers)
		next := make(map[int]int)
		for _, e := range events {
			if e.key%writers != wr {
				t.Fatalf("writer %d writes key %d", wr, e.key)
			}
			if e.index != next[e.key] {
				t.Fatalf("writer %d writes event %d of key %d after event %d", wr, e.index, e.key, next[e.key]-1)
			}
			next[e.key]++
			seen[e] = true
		}
		half := make(map[int]int)
		for _, e := range events[:len(events)/2] {
			half[e.key]++
		}
		for k := wr; k < len(perKey); k += writers {
			if got, want := half[k], perKey[k]/2; got < want-1 || got > want+1 {
				t.Errorf("writer %d: the first half of its events holds %d of key %d's %d, want about %d", wr, got, k, perKey[k], want)
			}
		}
	}
	if len(seen) != 20_000 {
		t.Errorf("the writers write %d distinct events, want 20000", len(seen))
	}
}

func TestRecoveryExtrapolate(t *testing.T) {
	r := RecoveryRun{Received: 1001, First: time.Second, Last: 11 * time.Second}
	if got := r.Extrapolate(2002); got != 21*time.Second {
		t.Errorf("Extrapolate(2002) = %s, want 21s", got)
	}
	if got := r.EventsPerSecond(); got != 1001.0/11 {
		t.Errorf("EventsPerSecond = %v", got)
	}
}

// recoveryTestOptions is a small recovery: 2,000 events, or
// OUTBOX_RECOVERY_EVENTS.
func recoveryTestOptions(tb testing.TB) RecoveryOptions {
	n := 2000
	if s := os.Getenv("OUTBOX_RECOVERY_EVENTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			tb.Fatalf("OUTBOX_RECOVERY_EVENTS is %q: set a positive number of events", s)
		}
		n = v
	}
	return RecoveryOptions{Events: n, Keys: min(1000, n/2), Retention: 2 * time.Second}
}

// The recovery harness leaves a backlog only the reconciler can publish,
// and counts every event published, once, on both targets; the reconciler
// ran and the pipeline's publish calls were counted.
func TestRecoveryCountsEveryEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("deploys two pipelines on a local stack")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	o := recoveryTestOptions(t)
	// Runs every 5 s instead of the pipeline's 5 minutes: the test checks
	// the counts, not the rate.
	o.Interval, o.Deadline, o.Log = 5*time.Second, 10*time.Minute, testLog{t}
	rec, err := MeasureRecovery(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Runs) != len(recoveryTargets) {
		t.Fatalf("%d runs, want %d", len(rec.Runs), len(recoveryTargets))
	}
	for _, r := range rec.Runs {
		if r.Events != o.Events || r.Received != o.Events || r.Lost != 0 || r.Duplicates != 0 {
			t.Errorf("%s: %d events written, %d received, %d lost, %d duplicates; want %d received once", r.Name, r.Events, r.Received, r.Lost, r.Duplicates, o.Events)
		}
		if r.Reconciles < 1 || r.First <= 0 || r.Last < r.First || r.HotKeyRate <= 0 {
			t.Errorf("%s: %d reconciler runs, first %s, last %s, hot key %.1f events/s", r.Name, r.Reconciles, r.First, r.Last, r.HotKeyRate)
		}
		publish := "events PutEvents"
		if r.Ordered {
			publish = "sns PublishBatch"
		}
		if r.Calls[publish] == 0 || r.Calls["dynamodb Query"] == 0 {
			t.Errorf("%s: calls %v lack %s or the pending index's queries", r.Name, r.Calls, publish)
		}
		// The functions' processes are stopped after the drain, so their
		// CPU time is counted where the system tells it.
		if _, _, ok := processCPU(); ok && (r.FunctionCPU <= 0 || r.StackCPU <= 0) {
			t.Errorf("%s: functions' CPU %s, stack's %s; want both measured", r.Name, r.FunctionCPU, r.StackCPU)
		}
		if r.Memory <= 0 || r.Instances < 1 {
			t.Errorf("%s: reconciler memory %d MB, %d invocations at once", r.Name, r.Memory, r.Instances)
		}
		t.Logf("%s: functions' CPU %s (%s per event), stack's %s", r.Name, r.FunctionCPU, r.PerEvent(r.FunctionCPU), r.StackCPU)
	}
}

// BenchmarkRecovery drains a small outage backlog (2,000 events, or
// OUTBOX_RECOVERY_EVENTS) on both targets per iteration, the reconciler
// on the pipeline's default schedule (every 5 minutes); `make bench` runs
// it once.
func BenchmarkRecovery(b *testing.B) {
	o := recoveryTestOptions(b)
	if testing.Verbose() {
		o.Log = os.Stderr
	}
	for b.Loop() {
		rec, err := MeasureRecovery(b.Context(), o)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rec.Runs {
			if r.Lost > 0 {
				b.Fatalf("%s: %d events lost", r.Name, r.Lost)
			}
			tag := strings.SplitN(r.Name, ",", 2)[0]
			tag = strings.ReplaceAll(strings.ToLower(tag), " ", "-")
			b.ReportMetric(r.EventsPerSecond(), tag+"-events/s")
			b.ReportMetric(r.HotKeyRate, tag+"-hotkey-events/s")
			b.ReportMetric(r.First.Seconds(), tag+"-first-s")
		}
	}
}

// testLog writes progress to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// sampleRecovery is a fixed recovery: the unordered run meets its rate,
// the ordered one does not keep half of it, and its first event comes
// after the interval.
func sampleRecovery() *Recovery {
	o := RecoveryOptions{Events: 200_000, Keys: 1000, HotKeys: 10, HotShare: 0.5, Interval: 5 * time.Minute, Retention: 5 * time.Second}
	return &Recovery{Options: o, Runs: []RecoveryRun{
		{Name: "EventBridge bus, unordered", Rate: 5000, Quota: "half of the quota", Events: 200_000, Received: 200_000, First: 2 * time.Second, Last: 80 * time.Second, HotKeyRate: 130,
			Calls: map[string]int64{"dynamodb Query": 2100, "dynamodb UpdateItem": 400_000, "events PutEvents": 20_000}, Reconciles: 1,
			FunctionCPU: 200 * time.Second, StackCPU: 300 * time.Second, Memory: 256, Instances: 8},
		{Name: "SNS FIFO topic, ordered", Ordered: true, Rate: 2400, Quota: "most of the quota", Events: 200_000, Received: 199_990, Lost: 10, Duplicates: 3, First: 301 * time.Second, Last: 400 * time.Second, HotKeyRate: 25,
			Calls: map[string]int64{"dynamodb Query": 2500, "sns PublishBatch": 150_000}, Reconciles: 2, RelayInvocations: 1,
			Memory: 256, Instances: 1},
	}}
}

func TestRecoveryGoals(t *testing.T) {
	rec := sampleRecovery()
	var met []bool
	for _, g := range rec.Goals() {
		met = append(met, g.Met)
	}
	// Unordered 2,500 events/s; ordered 500, a fifth; its hot key 25;
	// first events after 2 s and 301 s of a 5-minute interval.
	want := []bool{true, false, false, true, false}
	if len(met) != len(want) {
		t.Fatalf("goals %+v, want %d", rec.Goals(), len(want))
	}
	for i := range want {
		if met[i] != want[i] {
			t.Errorf("goal %q met = %v, want %v", rec.Goals()[i].Goal, met[i], want[i])
		}
	}
	line := rec.RecoveryLine()
	wantLine := "recovery: events=200000 unordered_events_per_s=2500 ordered_events_per_s=500 hot_key_events_per_s=25 first_s_unordered=2.0 first_s_ordered=301.0 lost=10 goals_met=2/5"
	if line != wantLine {
		t.Errorf("line\n%s\nwant\n%s", line, wantLine)
	}
	if got := (&Recovery{}).RecoveryLine(); !strings.Contains(got, "unordered_events_per_s=n/a") {
		t.Errorf("line without runs: %s", got)
	}
}

// TestRecoveryCPU checks the rates the CPU time per event allows: the
// sample's unordered run spent 1 ms of the functions' CPU and 1.5 ms of
// the stack's per event; its ordered run was not measured.
func TestRecoveryCPU(t *testing.T) {
	rec := sampleRecovery()
	un, or := rec.Unordered(), rec.Ordered()
	if got := un.PerEvent(un.FunctionCPU); got != time.Millisecond {
		t.Errorf("functions' CPU per event %s, want 1ms", got)
	}
	// 256 MB is 256/1769 of a vCPU: 144.7 events/s at 1 ms each.
	if got := un.InstanceEventsPerSecond(); got < 144 || got > 145 {
		t.Errorf("one invocation at 256 MB: %.1f events/s, want 144.7", got)
	}
	if got := or.InstanceEventsPerSecond(); got != 0 {
		t.Errorf("unmeasured run: %.1f events/s, want 0", got)
	}
	var b strings.Builder
	writeRecoveryCPU(func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }, rec.Runs, 2)
	want := "| EventBridge bus, unordered | 1.00 ms | 1.50 ms | 144 (256 MB, 0.14 vCPU) | 8 | 1,157 | 800 |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("CPU table\n%s\nwant the row\n%s", b.String(), want)
	}
	if strings.Contains(b.String(), or.Name) {
		t.Errorf("CPU table shows the unmeasured run:\n%s", b.String())
	}
	var none strings.Builder
	writeRecoveryCPU(func(f string, a ...any) { fmt.Fprintf(&none, f, a...) }, rec.Runs[1:], 2)
	if none.Len() != 0 {
		t.Errorf("CPU section without a measured run:\n%s", none.String())
	}
}

func TestRecoveryOptionsCheck(t *testing.T) {
	o := RecoveryOptions{Events: 10, Keys: 20}
	o.defaults()
	if err := o.check(); err == nil || !strings.Contains(err.Error(), "recovery keys (20)") {
		t.Errorf("check of 20 keys for 10 events: %v", err)
	}
}

func TestRecoveryFormats(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 200_000: "200,000", 10_000_000: "10,000,000", -1500: "-1,500"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
