package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/list"

	"github.com/outboxkit/terraform-provider-outbox/internal/operate"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

var _ list.ListResourceWithConfigure = &PipelineListResource{}

// PipelineListResource finds the pipelines of a Region for `terraform
// query`.
type PipelineListResource struct {
	resourceBase
}

// NewPipelineListResource returns the outbox_pipeline list resource.
func NewPipelineListResource() list.ListResource {
	return &PipelineListResource{pipelineResourceBase}
}

// ListResourceConfigSchema describes the list block.
func (l *PipelineListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listSchema("pipeline")
}

// List streams the pipelines found: relay functions tagged with their
// pipeline's name, each read as an import reads it.
func (l *PipelineListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	l.listNamed(ctx, req, stream, (*operate.Clients).PipelineNames, func(ctx context.Context, name string) (any, error) {
		r := PipelineResource{l.resourceBase}
		spec, st, err := r.clients().Lookup(ctx, name)
		if errors.Is(err, provision.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		m := modelFromSpec(spec, st, l.defaultTags())
		return &m, nil
	})
}
