package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// Event source mapping states.
const (
	mappingEnabled  = "Enabled"
	mappingDisabled = "Disabled"
	mappingDeleting = "Deleting"
)

// getMapping returns the mapping, or a NotFoundError when it does not exist
// (or is being deleted).
func (c *Provisioner) getMapping(ctx context.Context, uuid string) (*lambda.GetEventSourceMappingOutput, error) {
	out, err := c.Lambda.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)})
	if err != nil {
		return nil, awsops.NotFound("event source mapping", uuid, err)
	}
	if aws.ToString(out.State) == mappingDeleting {
		return nil, &awsops.NotFoundError{Kind: "event source mapping", ID: uuid}
	}
	return out, nil
}

// mappingDiff lists the settings of the mapping that differ from the spec.
func mappingDiff(s Spec, st State, have *lambda.GetEventSourceMappingOutput) []string {
	m := s.Mapping
	var diff awsops.Fields
	add := diff.Add
	add(aws.ToString(have.EventSourceArn) != st.StreamARN, "event_source_arn")
	add(aws.ToString(have.FunctionArn) != st.RelayFunctionARN, "function")
	add(aws.ToInt32(have.BatchSize) != m.BatchSize, "batch_size")
	add(aws.ToInt32(have.MaximumBatchingWindowInSeconds) != m.MaximumBatchingWindowSeconds, "maximum_batching_window")
	add(aws.ToInt32(have.ParallelizationFactor) != m.ParallelizationFactor, "parallelization_factor")
	add(aws.ToInt32(have.MaximumRetryAttempts) != *m.MaximumRetryAttempts, "maximum_retry_attempts")
	add(aws.ToInt32(have.MaximumRecordAgeInSeconds) != *m.MaximumRecordAgeSeconds, "maximum_record_age")
	add(aws.ToBool(have.BisectBatchOnFunctionError) != *m.BisectBatchOnFunctionError, "bisect_batch_on_function_error")
	var dest string
	if have.DestinationConfig != nil && have.DestinationConfig.OnFailure != nil {
		dest = aws.ToString(have.DestinationConfig.OnFailure.Destination)
	}
	add(dest != st.QueueARN, "on_failure_destination")
	var filters []string
	if have.FilterCriteria != nil {
		for _, f := range have.FilterCriteria.Filters {
			filters = append(filters, aws.ToString(f.Pattern))
		}
	}
	add(!slices.EqualFunc(filters, s.streamFilters(st), awsops.SamePolicy), "filter")
	add(len(have.FunctionResponseTypes) != 1 || have.FunctionResponseTypes[0] != types.FunctionResponseTypeReportBatchItemFailures, "function_response_types")
	add(have.MetricsConfig == nil || !slices.Equal(have.MetricsConfig.Metrics, relayMappingMetrics().Metrics), "metrics_config")
	add(aws.ToString(have.State) == mappingDisabled, "enabled")
	return diff
}

// relayMappingMetrics turns on the mapping's event counts (AWS/Lambda,
// by EventSourceMappingUUID): how many stream records it polled, filtered
// out (every record that is not an outbox INSERT), invoked the relay with,
// failed to invoke, and dropped to the on-failure queue. They tell a
// mapping that reads but invokes nothing (a filter that matches no
// record) from one that reads nothing.
func relayMappingMetrics() *types.EventSourceMappingMetricsConfig {
	return &types.EventSourceMappingMetricsConfig{Metrics: []types.EventSourceMappingMetric{types.EventSourceMappingMetricEventCount}}
}

func (c *Provisioner) ensureMapping(ctx context.Context, s Spec, st *State) error {
	if st.MappingUUID == "" {
		// The relay function is the pipeline's own, so a mapping of it on
		// the stream is too (one whose creation was not recorded); one
		// being deleted must be gone before another can be created.
		uuid, err := c.findMapping(ctx, st)
		if err != nil {
			return fmt.Errorf("creating event source mapping (%s on %s): %w", st.RelayFunctionName, st.StreamARN, err)
		}
		st.MappingUUID = uuid
	}
	if st.MappingUUID != "" {
		have, err := c.getMapping(ctx, st.MappingUUID)
		switch {
		case errors.Is(err, awsops.ErrNotFound):
			st.MappingUUID = ""
		case err != nil:
			return fmt.Errorf("reading event source mapping (%s): %w", st.MappingUUID, err)
		case aws.ToString(have.EventSourceArn) != st.StreamARN:
			// The stream was re-enabled: a mapping cannot move to the new
			// stream, so it is replaced.
			if err := c.deleteMapping(ctx, st); err != nil {
				return err
			}
		case len(mappingDiff(s, *st, have)) == 0:
			return nil
		default:
			return c.updateMapping(ctx, s, st)
		}
	}
	return c.createMapping(ctx, s, st)
}

// mappingInput is the relay's mapping as the Spec describes it: the one
// source of its settings, for both create and update.
func mappingInput(s Spec, st *State) *lambda.CreateEventSourceMappingInput {
	m := s.Mapping
	return &lambda.CreateEventSourceMappingInput{
		EventSourceArn:                 aws.String(st.StreamARN),
		FunctionName:                   aws.String(st.RelayFunctionARN),
		Enabled:                        aws.Bool(true),
		StartingPosition:               types.EventSourcePositionTrimHorizon,
		BatchSize:                      aws.Int32(m.BatchSize),
		MaximumBatchingWindowInSeconds: aws.Int32(m.MaximumBatchingWindowSeconds),
		ParallelizationFactor:          aws.Int32(m.ParallelizationFactor),
		MaximumRetryAttempts:           m.MaximumRetryAttempts,
		MaximumRecordAgeInSeconds:      m.MaximumRecordAgeSeconds,
		BisectBatchOnFunctionError:     m.BisectBatchOnFunctionError,
		DestinationConfig:              &types.DestinationConfig{OnFailure: &types.OnFailure{Destination: aws.String(st.QueueARN)}},
		FilterCriteria:                 filterCriteria(s.streamFilters(*st)),
		FunctionResponseTypes:          []types.FunctionResponseType{types.FunctionResponseTypeReportBatchItemFailures},
		MetricsConfig:                  relayMappingMetrics(),
		Tags:                           s.tags(),
	}
}

// updateMapping brings the recorded mapping to the settings of
// mappingInput that can change in place.
func (c *Provisioner) updateMapping(ctx context.Context, s Spec, st *State) error {
	in := mappingInput(s, st)
	_, err := c.Lambda.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{
		UUID: aws.String(st.MappingUUID), FunctionName: in.FunctionName, Enabled: in.Enabled,
		BatchSize: in.BatchSize, MaximumBatchingWindowInSeconds: in.MaximumBatchingWindowInSeconds,
		ParallelizationFactor: in.ParallelizationFactor, MaximumRetryAttempts: in.MaximumRetryAttempts,
		MaximumRecordAgeInSeconds: in.MaximumRecordAgeInSeconds, BisectBatchOnFunctionError: in.BisectBatchOnFunctionError,
		DestinationConfig: in.DestinationConfig, FilterCriteria: in.FilterCriteria, FunctionResponseTypes: in.FunctionResponseTypes,
		MetricsConfig: in.MetricsConfig,
	})
	if err != nil {
		return fmt.Errorf("updating event source mapping (%s): %w", st.MappingUUID, err)
	}
	if err := c.waitMappingEnabled(ctx, st.MappingUUID); err != nil {
		return fmt.Errorf("updating event source mapping (%s): %w", st.MappingUUID, err)
	}
	return nil
}

func (c *Provisioner) createMapping(ctx context.Context, s Spec, st *State) error {
	in := mappingInput(s, st)
	var out *lambda.CreateEventSourceMappingOutput
	err := c.retryPropagation(ctx, func() (err error) {
		out, err = c.Lambda.CreateEventSourceMapping(ctx, in)
		return err
	})
	if err != nil {
		return fmt.Errorf("creating event source mapping (%s on %s): %w", st.RelayFunctionName, st.StreamARN, err)
	}
	st.MappingUUID = aws.ToString(out.UUID)
	if err := c.waitMappingEnabled(ctx, st.MappingUUID); err != nil {
		return fmt.Errorf("creating event source mapping (%s): %w", st.MappingUUID, err)
	}
	return nil
}

// findMapping returns the mapping of the relay function on the stream, or
// "" when there is none, after waiting for mappings being deleted to go.
func (c *Provisioner) findMapping(ctx context.Context, st *State) (string, error) {
	var uuid string
	err := c.waitFor(ctx, "event source mappings of "+st.RelayFunctionName+" to be deleted", func(ctx context.Context) (bool, error) {
		uuid = ""
		p := lambda.NewListEventSourceMappingsPaginator(c.Lambda, &lambda.ListEventSourceMappingsInput{
			FunctionName: aws.String(st.RelayFunctionName), EventSourceArn: aws.String(st.StreamARN),
		})
		deleting := false
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return false, err
			}
			for _, m := range page.EventSourceMappings {
				if aws.ToString(m.State) == mappingDeleting {
					deleting = true
				} else {
					uuid = aws.ToString(m.UUID)
				}
			}
		}
		return uuid != "" || !deleting, nil
	})
	return uuid, err
}

func (c *Provisioner) waitMappingEnabled(ctx context.Context, uuid string) error {
	return c.waitFor(ctx, "event source mapping "+uuid+" to be enabled", func(ctx context.Context) (bool, error) {
		out, err := c.Lambda.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)})
		if err != nil {
			return false, err
		}
		switch state := aws.ToString(out.State); state {
		case mappingEnabled:
			return true, nil
		case mappingDisabled, mappingDeleting:
			return false, fmt.Errorf("it is %s: %s", state, aws.ToString(out.StateTransitionReason))
		}
		return false, nil
	})
}

// deleteMapping deletes the mapping and waits until it is gone.
func (c *Provisioner) deleteMapping(ctx context.Context, st *State) error {
	if st.MappingUUID == "" {
		return nil
	}
	uuid := st.MappingUUID
	_, err := c.Lambda.DeleteEventSourceMapping(ctx, &lambda.DeleteEventSourceMappingInput{UUID: aws.String(uuid)})
	if err := awsops.IgnoreNotFound(err); err != nil && !awsops.IsConflict(err) {
		return fmt.Errorf("deleting event source mapping (%s): %w", uuid, err)
	}
	err = c.waitFor(ctx, "event source mapping "+uuid+" to be deleted", func(ctx context.Context) (bool, error) {
		_, err := c.Lambda.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)})
		if awsops.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("deleting event source mapping (%s): %w", uuid, err)
	}
	st.MappingUUID = ""
	return nil
}

var mappingComponent = componentDef{
	Name: ComponentMapping, Required: true, Recorded: func(st State) bool { return st.MappingUUID != "" },
	Ensure: func(c *Provisioner, ctx context.Context, p *pass) error { return c.ensureMapping(ctx, p.s, p.st) },
	Read:   (*Provisioner).readMapping, Remove: (*Provisioner).deleteMapping, Lookup: (*Provisioner).lookupMapping,
}

func (c *Provisioner) readMapping(ctx context.Context, p *pass) error {
	st := p.st
	return readRecorded(p, ComponentMapping, "event source mapping", st.MappingUUID,
		func() (*lambda.GetEventSourceMappingOutput, error) { return c.getMapping(ctx, st.MappingUUID) },
		func() { st.MappingUUID = "" },
		func(have *lambda.GetEventSourceMappingOutput) []string { return mappingDiff(p.s, *st, have) })
}

// lookupMapping finds the relay function's mapping: the one on the
// table's stream, else one left on an earlier stream (the stream was
// disabled and enabled again), which Update moves to the stream. Its
// settings are those of the mapping found, never zeros.
func (c *Provisioner) lookupMapping(ctx context.Context, p *pass) error {
	var found *types.EventSourceMappingConfiguration
	pages := lambda.NewListEventSourceMappingsPaginator(c.Lambda, &lambda.ListEventSourceMappingsInput{FunctionName: aws.String(p.names().RelayFunction)})
	for pages.HasMorePages() && (found == nil || aws.ToString(found.EventSourceArn) != p.st.StreamARN) {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing event source mappings: %w", err)
		}
		for _, m := range page.EventSourceMappings {
			if aws.ToString(m.State) == mappingDeleting {
				continue
			}
			if found == nil || aws.ToString(m.EventSourceArn) == p.st.StreamARN {
				found = &m
			}
		}
	}
	if found == nil {
		return nil
	}
	p.st.MappingUUID = aws.ToString(found.UUID)
	p.s.Mapping = MappingSpec{
		BatchSize: aws.ToInt32(found.BatchSize), MaximumBatchingWindowSeconds: aws.ToInt32(found.MaximumBatchingWindowInSeconds),
		ParallelizationFactor: aws.ToInt32(found.ParallelizationFactor), MaximumRetryAttempts: found.MaximumRetryAttempts,
		MaximumRecordAgeSeconds: found.MaximumRecordAgeInSeconds, BisectBatchOnFunctionError: found.BisectBatchOnFunctionError,
	}
	return nil
}
