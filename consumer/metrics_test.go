package consumer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

func TestMetricsFlushIsEMF(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	m.add(DuplicatesSkipped, 2)
	m.add(LeasesTakenOver, 1)
	var buf bytes.Buffer
	now := time.UnixMilli(1796033700123)
	if err := m.Flush(&buf, "billing", now); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		FunctionName string
		Duplicates   float64  `json:"ConsumerDuplicatesSkipped"`
		Takeovers    float64  `json:"ConsumerLeasesTakenOver"`
		Mismatches   *float64 `json:"ConsumerPayloadMismatches"`
		AWS          struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if doc.FunctionName != "billing" || doc.Duplicates != 2 || doc.Takeovers != 1 || doc.Mismatches == nil || *doc.Mismatches != 0 {
		t.Errorf("document %s", buf.String())
	}
	cw := doc.AWS.CloudWatchMetrics
	if doc.AWS.Timestamp != now.UnixMilli() || len(cw) != 1 || cw[0].Namespace != Namespace ||
		len(cw[0].Dimensions) != 1 || cw[0].Dimensions[0][0] != DimensionFunctionName || len(cw[0].Metrics) != len(metricNames) {
		t.Errorf("_aws %+v", doc.AWS)
	}
	buf.Reset()
	_ = m.Flush(&buf, "billing", now)
	if !strings.Contains(buf.String(), `"ConsumerDuplicatesSkipped":0`) || m.Total(DuplicatesSkipped) != 2 {
		t.Errorf("a flush did not reset the counts, or lost the totals: %s", buf.String())
	}
}

func TestLoggerAddsRequestID(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	NewLogger(&buf, slog.LevelInfo).InfoContext(ctx, "duplicate skipped", "eventId", "e")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec[KeyRequestID] != "req-1" || rec["eventId"] != "e" {
		t.Errorf("log line %s (%v)", buf.String(), err)
	}
}

func TestPayloadMismatchErrorIsAndAs(t *testing.T) {
	t.Parallel()
	var err error = &PayloadMismatchError{EventID: "e", Stored: "a", Delivered: "b", Status: StatusCompleted}
	err = errors.Join(errors.New("batch"), err)
	var m *PayloadMismatchError
	if !errors.Is(err, ErrPayloadMismatch) || !errors.As(err, &m) || m.Stored != "a" || errors.Is(err, ErrInProgress) {
		t.Errorf("errors.Is/As on %v", err)
	}
}

func TestNewInboxRefusesBadSettings(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func() (*Inbox, error){
		"no client": func() (*Inbox, error) { return NewInbox(nil, "t") },
		"no table":  func() (*Inbox, error) { return NewInbox(nopClient{}, "") },
		"lease":     func() (*Inbox, error) { return NewInbox(nopClient{}, "t", WithLease(0)) },
		"retention": func() (*Inbox, error) { return NewInbox(nopClient{}, "t", WithRetention(-time.Hour)) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
