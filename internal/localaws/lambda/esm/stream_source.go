package esm

import (
	"context"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// streamKind is a DynamoDB stream event source: the settings of "DynamoDB
// event source mapping parameters" in the Lambda developer guide, read by
// pollerRun (poller.go).
type streamKind struct{}

// streamMembers are the members of the API a stream mapping takes beyond
// the common ones.
var streamMembers = map[string]bool{
	"ParallelizationFactor": true, "MaximumRetryAttempts": true, "MaximumRecordAgeInSeconds": true,
	"BisectBatchOnFunctionError": true, "TumblingWindowInSeconds": true, "StartingPosition": true,
	"StartingPositionTimestamp": true, "DestinationConfig": true,
}

func (streamKind) owns(arn string) bool { return isStreamArn(arn) }

func (streamKind) defaults(st *Settings) {
	st.BatchSize = 100
	st.ParallelizationFactor = 1
	st.MaximumRetryAttempts = -1
	st.MaximumRecordAgeInSeconds = -1
}

func (streamKind) apply(_ *Service, in *mappingInput, st *Settings, create bool) error {
	if err := refuseMembers(in, streamMembers); err != nil {
		return err
	}
	if err := applyStreamScalars(in, st); err != nil {
		return err
	}
	if err := applyDestination(in.DestinationConfig, st); err != nil {
		return err
	}
	return applyStartingPosition(in, st, create)
}

func (streamKind) exists(s *Service, arn string) error {
	streams, err := s.streams()
	if err != nil {
		return err
	}
	if !streams.StreamExists(arn) {
		return InvalidParameterValueException("Stream not found: %s", arn)
	}
	return nil
}

func (streamKind) checkAccess(s *Service, roleArn string, st *Settings) error {
	return s.checkStreamAccess(roleArn, st)
}

func (streamKind) render(st Settings, c *Configuration) {
	c.StartingPosition = st.StartingPosition
	if st.StartingPositionTimestamp != nil {
		ts := awsapi.Epoch(*st.StartingPositionTimestamp)
		c.StartingPositionTimestamp = &ts
	}
	c.ParallelizationFactor = intPtr(st.ParallelizationFactor)
	c.MaximumRecordAgeInSeconds = intPtr(st.MaximumRecordAgeInSeconds)
	c.BisectBatchOnFunctionError = boolPtr(st.BisectBatchOnFunctionError)
	c.MaximumRetryAttempts = intPtr(st.MaximumRetryAttempts)
	c.TumblingWindowInSeconds = intPtr(st.TumblingWindowInSeconds)
	c.DestinationConfig = &wireDestinationConfig{OnFailure: &wireOnFailure{}}
	if st.OnFailureDestination != "" {
		d := st.OnFailureDestination
		c.DestinationConfig.OnFailure.Destination = &d
	}
}

// run reads the stream's shards (pollerRun) until ctx ends.
func (streamKind) run(ctx context.Context, m *mapping, st Settings) {
	run := &pollerRun{m: m, settings: st, shards: map[string]*shardRun{}, interval: m.svc.pollInterval()}
	m.mu.Lock()
	if ctx.Err() == nil {
		m.run = run
	}
	m.mu.Unlock()
	run.loop(ctx)
}
