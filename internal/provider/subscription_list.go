package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/list"

	"github.com/outboxkit/terraform-provider-outbox/internal/operate"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

var _ list.ListResourceWithConfigure = &SubscriptionListResource{}

// SubscriptionListResource finds the subscriptions of a Region for
// `terraform query`.
type SubscriptionListResource struct {
	resourceBase
}

// NewSubscriptionListResource returns the outbox_subscription list
// resource.
func NewSubscriptionListResource() list.ListResource {
	return &SubscriptionListResource{subscriptionResourceBase}
}

// ListResourceConfigSchema describes the list block.
func (l *SubscriptionListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listSchema("subscription")
}

// List streams the subscriptions found: queues tagged with their
// subscription's name, each read as an import reads it.
func (l *SubscriptionListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	l.listNamed(ctx, req, stream, (*operate.Clients).SubscriptionNames, func(ctx context.Context, name string) (any, error) {
		s, st, err := subscription.New(l.data.AWS).Lookup(ctx, name)
		if errors.Is(err, subscription.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		m := subscriptionModelFromSpec(s, st, l.defaultTags())
		return &m, nil
	})
}
