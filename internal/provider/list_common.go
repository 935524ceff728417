package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/operate"
)

// The list resources of `terraform query` (Terraform 1.14 and later) find
// the pipelines and subscriptions of the provider's account and Region, as
// the outbox command finds them, and give each its identity and, asked
// for, its resource object: what an import by that identity reads, from
// which `terraform query -generate-config-out` writes configuration.

// listQueryModel is the configuration of a list block.
type listQueryModel struct {
	NamePrefix types.String `tfsdk:"name_prefix"`
}

// listSchema is the list block's schema of a resource; what names it
// ("pipeline").
func listSchema(what string) listschema.Schema {
	return listschema.Schema{
		MarkdownDescription: "Finds the " + what + "s of the provider's account and Region, with their identity and, with `include_resource = true`, " +
			"their configuration, so that `terraform query -generate-config-out=FILE` writes import blocks and resource blocks for them.",
		Attributes: map[string]listschema.Attribute{
			"name_prefix": listschema.StringAttribute{Optional: true,
				MarkdownDescription: "Only the " + what + "s whose name starts with this. Defaults to all of them."},
		},
	}
}

// listNamed streams a result per name found by names, that starts with the
// configured prefix: its identity and, when the request includes it, the
// resource that model reads (nil for a name that is no longer there).
func (b *resourceBase) listNamed(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream,
	names func(*operate.Clients, context.Context) ([]string, error), model func(ctx context.Context, name string) (any, error)) {
	var q listQueryModel
	diags := req.Config.Get(ctx, &q)
	if !b.begin(&diags) {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	found, err := names(operate.NewClients(b.data.AWS), ctx)
	if err != nil {
		diags.AddError("Listing "+b.what+"s", err.Error())
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		for _, name := range found {
			if !strings.HasPrefix(name, q.NamePrefix.ValueString()) {
				continue
			}
			r, ok := b.listResult(ctx, req, name, model)
			if ok && !push(r) {
				return
			}
		}
	}
}

// listResult is the result of the resource called name; false for one
// that is gone since it was found.
func (b *resourceBase) listResult(ctx context.Context, req list.ListRequest, name string, model func(ctx context.Context, name string) (any, error)) (list.ListResult, bool) {
	r := req.NewListResult(ctx)
	r.DisplayName = name
	r.Diagnostics.Append(r.Identity.Set(ctx, b.identity(name))...)
	if !req.IncludeResource {
		return r, true
	}
	m, err := model(ctx, name)
	switch {
	case err != nil:
		r.Diagnostics.Append(diag.NewErrorDiagnostic("Reading "+b.what+" ("+name+")", err.Error()))
	case m == nil:
		return r, false
	default:
		r.Diagnostics.Append(r.Resource.Set(ctx, m)...)
	}
	return r, true
}
