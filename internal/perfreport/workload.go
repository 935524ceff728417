package perfreport

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// scenarioTag is a scenario's name as a key fragment.
func scenarioTag(name string) string { return strings.ReplaceAll(name, " ", "-") }

// burst writes n events while the relay's mapping is paused, resumes it
// and times the drain to the subscription queue.
func burst(ctx context.Context, ctl *control.Client, d *deployed, n int, tag string, tr *tracker) (Burst, error) {
	uuid := d.pipeline.MappingUUID
	if _, err := ctl.PauseMapping(ctx, uuid); err != nil {
		return Burst{}, err
	}
	resumed := false
	defer func() {
		if !resumed {
			_, _ = ctl.ResumeMapping(context.WithoutCancel(ctx), uuid)
		}
	}()
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				id, err := writeEvent(ctx, d, fmt.Sprintf("%s-%d", tag, i), tr)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return Burst{}, err
	default:
	}
	before, err := ctl.MappingStatus(ctx, uuid)
	if err != nil {
		return Burst{}, err
	}
	t0 := time.Now()
	if _, err := ctl.ResumeMapping(ctx, uuid); err != nil {
		return Burst{}, err
	}
	resumed = true
	if missing := tr.waitAll(ctx, ids, 5*time.Minute); missing > 0 {
		return Burst{}, fmt.Errorf("%s relay: %d of %d burst events never arrived", d.mode, missing, n)
	}
	last := tr.lastReceipt(ids)
	// Let the last invocation end before reading the counters.
	time.Sleep(300 * time.Millisecond)
	after, err := ctl.MappingStatus(ctx, uuid)
	if err != nil {
		return Burst{}, err
	}
	return Burst{Events: n, Drain: last.Sub(t0), Invocations: after.Counters.Invocations - before.Counters.Invocations}, nil
}

// orderDetail is the event detail of the measurements: about 200 bytes.
func orderDetail(id string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"orderId":%q,"customerId":"C-104729","total":129.90,"currency":"EUR","lines":[{"sku":"SKU-1001","qty":2,"price":39.95},{"sku":"SKU-2002","qty":1,"price":50.00}],"channel":"web"}`, id))
}

// orderItem is the application's item written with each event.
func orderItem(pk string) ddbtypes.TransactWriteItem {
	return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
		TableName: aws.String(appTable),
		Item: map[string]ddbtypes.AttributeValue{
			"PK":     &ddbtypes.AttributeValueMemberS{Value: pk},
			"SK":     &ddbtypes.AttributeValueMemberS{Value: "ORDER"},
			"status": &ddbtypes.AttributeValueMemberS{Value: "PLACED"},
			"total":  &ddbtypes.AttributeValueMemberN{Value: "129.90"},
		},
	}}
}

// writeEvent commits an order and its event in one transaction and
// records the commit time.
func writeEvent(ctx context.Context, d *deployed, tag string, tr *tracker) (string, error) {
	pk := "ORDER#" + d.mode + "-" + tag
	recs, err := d.writer.Write(ctx, []ddbtypes.TransactWriteItem{orderItem(pk)},
		outbox.Event{Source: d.source, DetailType: "OrderPlaced", Detail: orderDetail(pk)})
	if err != nil {
		return "", fmt.Errorf("writing an event for the %s relay: %w", d.mode, err)
	}
	id := recs[0].EventID
	tr.commit(id, time.Now())
	return id, nil
}

// consume long-polls a subscription queue and records each event's
// receipt, until ctx is done.
func consume(ctx context.Context, q *sqs.Client, url string, tr *tracker) {
	for ctx.Err() == nil {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 20,
		})
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		var del []sqstypes.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			var ev struct {
				Detail struct {
					Metadata struct {
						EventID string `json:"eventId"`
					} `json:"metadata"`
				} `json:"detail"`
			}
			if json.Unmarshal([]byte(aws.ToString(m.Body)), &ev) == nil && ev.Detail.Metadata.EventID != "" {
				tr.receive(ev.Detail.Metadata.EventID, now)
			}
			del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(del) > 0 {
			_, _ = q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: del})
		}
	}
}

// createTable creates t (keyed by PK and SK, with its pending index unless
// NoPendingIndex) and waits until it is active.
func createTable(ctx context.Context, ddb *dynamodb.Client, t outbox.Table) error {
	if _, err := ddb.CreateTable(ctx, t.CreateTableInput()); err != nil {
		return fmt.Errorf("creating table %s: %w", t.Name, err)
	}
	w := dynamodb.NewTableExistsWaiter(ddb, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = time.Second
	})
	return w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.Name)}, time.Minute)
}
