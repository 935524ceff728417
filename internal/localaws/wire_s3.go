package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/s3"
)

func init() {
	registerService("s3", func(s *Stack) ([]awsapi.Service, error) {
		return []awsapi.Service{s3.New(s.Env(), s3.Options{LifecycleSweepInterval: s.opts.LifecycleSweepInterval})}, nil
	})
}

// S3 returns the stack's S3 service, or nil when disabled.
func (s *Stack) S3() *s3.Service {
	svc, _ := lookupService[*s3.Service](s, s3.ServiceName)
	return svc
}
