package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

var (
	_ datasource.DataSource              = &PipelineDataSource{}
	_ datasource.DataSourceWithConfigure = &PipelineDataSource{}
)

// NewPipelineDataSource returns the outbox_pipeline data source.
func NewPipelineDataSource() datasource.DataSource { return &PipelineDataSource{} }

// PipelineDataSource reads an existing pipeline by name, for application
// stacks kept in another state than the pipeline's.
type PipelineDataSource struct {
	data *ProviderData
}

// Metadata names the data source.
func (d *PipelineDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pipeline"
}

// Configure receives the provider's AWS configuration.
func (d *PipelineDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if data := providerData(req.ProviderData, &resp.Diagnostics); data != nil {
		d.data = data
	}
}

// Schema describes the data source: the name, the writer object and the
// computed attributes of outbox_pipeline.
func (d *PipelineDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := map[string]dschema.Attribute{
		"name": dschema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Name of the pipeline, as in `outbox_pipeline`'s `name`.",
		},
		"writer": writerDataSourceAttribute(),
	}
	for _, c := range computedStrings {
		if c.name == "name" {
			continue
		}
		attrs[c.name] = dschema.StringAttribute{Computed: true, MarkdownDescription: c.desc}
	}
	resp.Schema = dschema.Schema{
		MarkdownDescription: "An existing outbox pipeline, found by name as `terraform import` finds it: " +
			"what an application's writer needs (`writer`) and the ARNs of the pipeline's components, for stacks kept in another state than the pipeline's.",
		Attributes: attrs,
	}
}

func writerDataSourceAttribute() dschema.ObjectAttribute {
	return dschema.ObjectAttribute{Computed: true, MarkdownDescription: writerMarkdown(), AttributeTypes: writerAttrTypes()}
}

// Read finds the pipeline and records its writer settings and ARNs.
func (d *PipelineDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.data == nil {
		resp.Diagnostics.AddError("Unconfigured provider", "The outbox provider was not configured before the outbox_pipeline data source was used: report this as a bug of the provider.")
		return
	}
	var name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	n := strings.TrimSpace(name.ValueString())
	spec, st, err := provision.New(d.data.AWS, provision.RelayCode{}).Lookup(ctx, n)
	if errors.Is(err, provision.ErrNotFound) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), fmt.Sprintf("Reading outbox pipeline (%s)", n),
			fmt.Sprintf("No outbox pipeline named %q exists in this account and region (its relay function %s was not found).", n, provision.NamesFor(n).RelayFunction))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Reading outbox pipeline (%s)", n), errorDetail(err))
		return
	}
	m := PipelineResourceModel{Name: types.StringValue(n)}
	m.setComputedStrings(st)
	m.ID = types.StringValue(n)
	m.Writer = writerValue(spec.WithDefaults(), m.TableName, m.TTLAttributeInUse, writerKnown{table: true, pendingIndex: true, claim: true})
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("writer"), m.Writer)...)
	for _, c := range computedStrings {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(c.name), *c.model(&m))...)
	}
}
