package esm

import "slices"

// MetricSink receives the metrics a mapping emits: CloudWatch.
type MetricSink interface {
	PutMetric(namespace, name string, dims map[string]string, value float64, unit string)
}

// The event count metrics of a mapping with MetricsConfig
// {"Metrics":["EventCount"]}, in AWS/Lambda by EventSourceMappingUUID
// ("Event source mapping metrics", Lambda developer guide).
const (
	metricNamespace          = "AWS/Lambda"
	metricDimension          = "EventSourceMappingUUID"
	MetricPolled             = "PolledEventCount"
	MetricFilteredOut        = "FilteredOutEventCount"
	MetricInvoked            = "InvokedEventCount"
	MetricFailedInvoke       = "FailedInvokeEventCount"
	MetricDropped            = "DroppedEventCount"
	MetricOnFailureDelivered = "OnFailureDestinationDeliveredEventCount"
	MetricDeleted            = "DeletedEventCount"
	eventCount               = "EventCount"
	metricUnitCount          = "Count"
)

// emit publishes n events of metric for the mapping when its settings
// turn the event counts on and a sink is configured.
func (m *mapping) emit(st Settings, metric string, n int) {
	if n <= 0 || !slices.Contains(st.Metrics, eventCount) || m.svc.cfg.Metrics == nil {
		return
	}
	sink := m.svc.cfg.Metrics()
	if sink == nil {
		return
	}
	sink.PutMetric(metricNamespace, metric, map[string]string{metricDimension: m.uuid}, float64(n), metricUnitCount)
}
