package conformance_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// BenchmarkStackStart measures starting every service of a stack until it
// answers a request, and closing it (target: under 1 s).
func BenchmarkStackStart(b *testing.B) {
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		s, err := localaws.Start(ctx, localaws.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := dynamodb.NewFromConfig(localawstest.Config(s)).ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/start")
}

// BenchmarkTransactWriteItems measures transactions of 4 puts (an outbox
// write: the state item and 3 outbox items) on a table with a stream,
// through the SDK, one at a time.
func BenchmarkTransactWriteItems(b *testing.B) {
	e := newEnv(b)
	e.table("outbox")
	i := 0
	start := time.Now()
	for b.Loop() {
		pk := fmt.Sprintf("order#%d", i)
		i++
		items := []ddbtypes.TransactWriteItem{
			{Put: &ddbtypes.Put{TableName: aws.String("outbox"), Item: key(pk, "STATE")}},
		}
		for j := range 3 {
			items = append(items, ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: aws.String("outbox"), Item: key(pk, fmt.Sprintf("OUTBOX#%d", j))}})
		}
		if _, err := e.ddb.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
			b.Fatal(err)
		}
	}
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/secs, "txn/s")
	b.ReportMetric(float64(4*b.N)/secs, "items/s")
}

// BenchmarkWriteToInvocation measures the latency from a PutItem (taken
// when the call starts, so an upper bound of the commit) to the start of
// the function's invocation that receives the record, with the mapping's
// default cadence of 4 polls a second per shard. Writes are spread over
// the poll period. Run with -benchtime=100x for a meaningful p99.
func BenchmarkWriteToInvocation(b *testing.B) {
	f := newFixture(newEnv(b), hostArch())
	f.mapping(nil)
	// A first record starts the function's process.
	f.put(f.table, "warm", "OUTBOX#0", nil)
	f.rec.waitDelivered("INSERT warm/OUTBOX#0")
	var lat []time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		time.Sleep(time.Duration(i%7) * 37 * time.Millisecond)
		b.StartTimer()
		sk := fmt.Sprintf("OUTBOX#%d", i)
		i++
		start := time.Now()
		f.put(f.table, "bench", sk, nil)
		want := "INSERT bench/" + sk
		var at int64
		localawstest.EventuallyState(f.t, deliveryTimeout, "delivery of "+want, func() (bool, string) {
			f.rec.drain()
			for _, rep := range f.rec.phase("start") {
				if slices.Contains(rep.Items(), want) {
					at = rep.AtNanos
					return true, ""
				}
			}
			return false, ""
		})
		lat = append(lat, time.Unix(0, at).Sub(start))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
		b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "ms-p99")
	}
}
