package cloudwatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cw "github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

func TestMetricsRoundTrip(t *testing.T) { eachProtocol(t, testMetricsRoundTrip) }

// testMetricsRoundTrip puts datapoints with PutMetricData and reads them
// back with ListMetrics and GetMetricStatistics, per period and for the
// exact dimensions asked.
func testMetricsRoundTrip(t *testing.T, p protocol) {
	c := start(t, p)
	ctx := context.Background()
	base := time.Now().Truncate(time.Minute).Add(-10 * time.Minute)
	dims := []cwtypes.Dimension{{Name: aws.String("Queue"), Value: aws.String("orders")}}
	if _, err := c.PutMetricData(ctx, &cw.PutMetricDataInput{Namespace: aws.String("App"), MetricData: []cwtypes.MetricDatum{
		{MetricName: aws.String("Sent"), Dimensions: dims, Value: aws.Float64(2), Timestamp: aws.Time(base.Add(10 * time.Second)), Unit: cwtypes.StandardUnitCount},
		{MetricName: aws.String("Sent"), Dimensions: dims, Value: aws.Float64(5), Timestamp: aws.Time(base.Add(20 * time.Second)), Unit: cwtypes.StandardUnitCount},
		{MetricName: aws.String("Sent"), Dimensions: dims, Value: aws.Float64(1), Timestamp: aws.Time(base.Add(70 * time.Second)), Unit: cwtypes.StandardUnitCount},
		{MetricName: aws.String("Sent"), Value: aws.Float64(100), Timestamp: aws.Time(base.Add(10 * time.Second))},
	}}); err != nil {
		t.Fatalf("PutMetricData: %v", err)
	}
	list, err := c.ListMetrics(ctx, &cw.ListMetricsInput{Namespace: aws.String("App"), Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("Queue")}}})
	if err != nil {
		t.Fatalf("ListMetrics: %v", err)
	}
	if len(list.Metrics) != 1 || aws.ToString(list.Metrics[0].MetricName) != "Sent" || len(list.Metrics[0].Dimensions) != 1 {
		t.Fatalf("ListMetrics = %+v, want the one Sent metric with the Queue dimension", list.Metrics)
	}
	out, err := c.GetMetricStatistics(ctx, &cw.GetMetricStatisticsInput{Namespace: aws.String("App"), MetricName: aws.String("Sent"), Dimensions: dims,
		StartTime: aws.Time(base), EndTime: aws.Time(base.Add(2 * time.Minute)), Period: aws.Int32(60),
		Statistics: []cwtypes.Statistic{cwtypes.StatisticSum, cwtypes.StatisticMaximum, cwtypes.StatisticSampleCount}})
	if err != nil {
		t.Fatalf("GetMetricStatistics: %v", err)
	}
	if len(out.Datapoints) != 2 {
		t.Fatalf("datapoints %+v, want two one-minute periods", out.Datapoints)
	}
	first, second := out.Datapoints[0], out.Datapoints[1]
	if aws.ToFloat64(first.Sum) != 7 || aws.ToFloat64(first.Maximum) != 5 || aws.ToFloat64(first.SampleCount) != 2 || !aws.ToTime(first.Timestamp).Equal(base) {
		t.Errorf("first period %+v, want Sum 7, Maximum 5, SampleCount 2 at %v", first, base)
	}
	if aws.ToFloat64(second.Sum) != 1 || first.Unit != cwtypes.StandardUnitCount {
		t.Errorf("second period %+v, want Sum 1; unit %s", second, first.Unit)
	}
	if _, err := c.PutMetricData(ctx, &cw.PutMetricDataInput{Namespace: aws.String("AWS/Lambda"), MetricData: []cwtypes.MetricDatum{{MetricName: aws.String("X"), Value: aws.Float64(1)}}}); err == nil {
		t.Error("PutMetricData accepted the reserved AWS/ namespace")
	}
}
