package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
)

func init() {
	registerService("dynamodb", func(s *Stack) ([]awsapi.Service, error) {
		svc := dynamodb.New(s.Env(), dynamodb.Options{
			StreamRetention:     s.opts.StreamRetention,
			TTLSweepInterval:    s.opts.TTLSweepInterval,
			IteratorLifetime:    s.opts.StreamIteratorLifetime,
			StreamShards:        s.opts.StreamShards,
			StreamShardLifetime: s.opts.StreamShardLifetime,
			Replication:         s.regions.replication,
			Metrics:             optionalDependency[dynamodb.MetricSink](s, "cloudwatch"),
		})
		return []awsapi.Service{svc, svc.StreamsAPI()}, nil
	})
}

// DynamoDB returns the stack's DynamoDB service (its Streams method is the
// in-process stream API), or nil when disabled.
func (s *Stack) DynamoDB() *dynamodb.Service {
	d, _ := lookupService[*dynamodb.Service](s, "dynamodb")
	return d
}
