package provision

import (
	"context"

	"github.com/outboxkit/terraform-provider-outbox/internal/target"
)

// checkTarget verifies, before anything is built or changed, that the
// target exists and is in the clients' region (target.Check).
func (c *Pipeline) checkTarget(ctx context.Context, s Spec) error {
	return target.Check(ctx, c.AWS, s.Target, c.Region)
}
