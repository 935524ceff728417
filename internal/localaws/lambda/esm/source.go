package esm

import "context"

// sourceKind is what differs between the event sources a mapping reads (a
// DynamoDB stream, an SQS queue): which ARNs are its own, its defaults, the
// settings it takes, whether the source exists and the role may read it,
// how the mapping renders and how its poller runs. The rest (the API,
// validation of the common settings, states, control routes, the
// invoker) is shared.
type sourceKind interface {
	// owns reports whether an event source ARN is of this kind.
	owns(arn string) bool
	// defaults sets the create defaults of the kind's settings.
	defaults(st *Settings)
	// apply validates and applies the kind's own members of in.
	apply(s *Service, in *mappingInput, st *Settings, create bool) error
	// exists checks that the event source exists.
	exists(s *Service, arn string) error
	// checkAccess checks that the role may read the source (and send to
	// the destination), with Lambda's messages.
	checkAccess(s *Service, roleArn string, st *Settings) error
	// render sets the kind's members of a configuration.
	render(st Settings, c *Configuration)
	// run polls the source and invokes the function until ctx ends.
	run(ctx context.Context, m *mapping, st Settings)
}

// sourceKinds are the kinds of event source served.
var sourceKinds = []sourceKind{streamKind{}, queueKind{}}

// kindOf returns the kind of an event source ARN.
func kindOf(arn string) (sourceKind, bool) {
	for _, k := range sourceKinds {
		if k.owns(arn) {
			return k, true
		}
	}
	return nil, false
}

// unsupported is Lambda's refusal of a member the source kind does not take.
func unsupported(member string) error {
	return InvalidParameterValueException("Unsupported parameter for given event source mapping type: %s", member)
}

// refuseMembers refuses the members of in that the kind does not take.
func refuseMembers(in *mappingInput, members map[string]bool) error {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"ParallelizationFactor", in.ParallelizationFactor != nil},
		{"MaximumRetryAttempts", in.MaximumRetryAttempts != nil},
		{"MaximumRecordAgeInSeconds", in.MaximumRecordAgeInSeconds != nil},
		{"BisectBatchOnFunctionError", in.BisectBatchOnFunctionError != nil},
		{"TumblingWindowInSeconds", in.TumblingWindowInSeconds != nil},
		{"StartingPosition", in.StartingPosition != nil},
		{"StartingPositionTimestamp", in.StartingPositionTimestamp != nil},
		{"ScalingConfig", in.ScalingConfig != nil},
		{"DestinationConfig", in.DestinationConfig != nil && in.DestinationConfig.OnFailure != nil && in.DestinationConfig.OnFailure.Destination != nil && *in.DestinationConfig.OnFailure.Destination != ""},
		{"Topics", len(in.Topics) > 0},
		{"Queues", len(in.Queues) > 0},
		{"SourceAccessConfigurations", len(in.SourceAccessConfigurations) > 0},
	} {
		if f.set && !members[f.name] {
			return unsupported(f.name)
		}
	}
	return nil
}

func intPtr(v int) *int    { return &v }
func boolPtr(v bool) *bool { return &v }
