// Package provider is the Terraform framework glue of the outbox provider:
// schemas, models and their mapping to the pipeline package, which does the
// AWS work.
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var _ provider.Provider = &OutboxProvider{}

// OutboxProvider provisions transactional outbox pipelines on AWS.
type OutboxProvider struct {
	version string
}

// New returns a constructor of the provider at the given version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &OutboxProvider{version: version} }
}

// Metadata names the provider.
func (p *OutboxProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "outbox"
	resp.Version = p.version
}

// Schema describes the provider configuration.
func (p *OutboxProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Provisions the transactional outbox on AWS DynamoDB: the stream, the filtered event source mapping, the relay Lambda, its dead-letter queue, the sparse pending index and the reconciler.",
	}
}

// Configure prepares the AWS clients shared by resources.
func (p *OutboxProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

// Resources lists the provider's resources.
func (p *OutboxProvider) Resources(context.Context) []func() resource.Resource {
	return nil
}

// DataSources lists the provider's data sources.
func (p *OutboxProvider) DataSources(context.Context) []func() datasource.DataSource {
	return nil
}
