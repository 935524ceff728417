package lambda

import "github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"

// RegisterControl implements awsapi.ControlRegistrar.
func (s *Service) RegisterControl(c *awsapi.Control) {}
