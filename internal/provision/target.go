package provision

import (
	"context"

	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
)

// checkTarget verifies, before anything is built or changed, that the
// target exists and is in the clients' region (targetkind.Check).
func (c *Provisioner) checkTarget(ctx context.Context, s Spec) error {
	return targetkind.Check(ctx, c.AWS, s.Target, c.Region)
}

// targetComponent records the bus or topic that the functions publish to.
var targetComponent = componentDef{
	Ensure: func(_ *Provisioner, _ context.Context, p *pass) error {
		p.st.TargetARN = p.s.TargetARN(p.st.account())
		return nil
	},
	Lookup: func(_ *Provisioner, _ context.Context, p *pass) error {
		p.st.TargetARN = p.s.WithDefaults().TargetARN(p.st.account())
		return nil
	},
}
