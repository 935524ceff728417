package awsapi

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestFaultLatencyDistribution(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	f := &Faults{rand: rng.Float64}
	f.Add(FaultRule{Operation: "PutEvents", Latency: Duration(20 * time.Millisecond), LatencyP99: Duration(80 * time.Millisecond)})
	const n = 20000
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i], _ = f.Request("events", "PutEvents")
	}
	slices.Sort(ds)
	p50, p99 := ds[n/2], ds[n*99/100]
	if p50 < 19*time.Millisecond || p50 > 21*time.Millisecond {
		t.Errorf("median = %s, want about 20ms", p50)
	}
	if p99 < 72*time.Millisecond || p99 > 88*time.Millisecond {
		t.Errorf("p99 = %s, want about 80ms", p99)
	}
	if ds[0] <= 0 {
		t.Errorf("smallest latency = %s, want positive", ds[0])
	}
}

func TestFaultLatencyConstantWithoutTail(t *testing.T) {
	t.Parallel()
	f := NewFaults()
	f.Add(FaultRule{Operation: "PutItem", Latency: Duration(5 * time.Millisecond)})
	for range 100 {
		if d, _ := f.Request("dynamodb", "PutItem"); d != 5*time.Millisecond {
			t.Fatalf("latency = %s, want a constant 5ms", d)
		}
	}
}
