// Package provider is the Terraform framework glue of the outbox provider:
// schemas, models and their mapping to packages provision and subscription, which do the
// AWS work.
package provider

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsclient"
)

var (
	_ provider.Provider                  = &OutboxProvider{}
	_ provider.ProviderWithListResources = &OutboxProvider{}
	_ provider.ProviderWithActions       = &OutboxProvider{}
)

// OutboxProvider provisions transactional outbox pipelines on AWS.
type OutboxProvider struct {
	version string
}

// New returns a constructor of the provider at the given version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &OutboxProvider{version: version} }
}

// OutboxProviderModel is the provider block.
type OutboxProviderModel struct {
	Region                    types.String      `tfsdk:"region"`
	Profile                   types.String      `tfsdk:"profile"`
	SharedConfigFiles         types.List        `tfsdk:"shared_config_files"`
	SharedCredentialsFiles    types.List        `tfsdk:"shared_credentials_files"`
	EndpointURL               types.String      `tfsdk:"endpoint_url"`
	SkipCredentialsValidation types.Bool        `tfsdk:"skip_credentials_validation"`
	AssumeRole                *AssumeRoleModel  `tfsdk:"assume_role"`
	Endpoints                 *EndpointsModel   `tfsdk:"endpoints"`
	DefaultTags               *DefaultTagsModel `tfsdk:"default_tags"`
}

// AssumeRoleModel is the assume_role block.
type AssumeRoleModel struct {
	RoleARN     types.String `tfsdk:"role_arn"`
	SessionName types.String `tfsdk:"session_name"`
	ExternalID  types.String `tfsdk:"external_id"`
}

// EndpointsModel is the endpoints block: one URL per service.
type EndpointsModel struct {
	CloudWatch      types.String `tfsdk:"cloudwatch"`
	DynamoDB        types.String `tfsdk:"dynamodb"`
	DynamoDBStreams types.String `tfsdk:"dynamodbstreams"`
	Events          types.String `tfsdk:"events"`
	IAM             types.String `tfsdk:"iam"`
	Lambda          types.String `tfsdk:"lambda"`
	Logs            types.String `tfsdk:"logs"`
	Scheduler       types.String `tfsdk:"scheduler"`
	SNS             types.String `tfsdk:"sns"`
	SQS             types.String `tfsdk:"sqs"`
	STS             types.String `tfsdk:"sts"`
}

func (m *EndpointsModel) byName() map[string]types.String {
	return map[string]types.String{
		"cloudwatch": m.CloudWatch, "dynamodb": m.DynamoDB, "dynamodbstreams": m.DynamoDBStreams,
		"events": m.Events, "iam": m.IAM, "lambda": m.Lambda, "logs": m.Logs,
		"scheduler": m.Scheduler, "sns": m.SNS, "sqs": m.SQS, "sts": m.STS,
	}
}

// DefaultTagsModel is the default_tags block.
type DefaultTagsModel struct {
	Tags types.Map `tfsdk:"tags"`
}

// ProviderData is what resources receive from Configure.
type ProviderData struct {
	AWS         aws.Config
	Identity    awsclient.Identity
	DefaultTags map[string]string
	Version     string
}

// Metadata names the provider.
func (p *OutboxProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "outbox"
	resp.Version = p.version
}

// Schema describes the provider configuration, modelled on hashicorp/aws's.
func (p *OutboxProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	endpointAttrs := map[string]schema.Attribute{}
	for _, name := range awsclient.EndpointNames() {
		endpointAttrs[name] = schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: fmt.Sprintf("URL of the %s endpoint. Overrides `endpoint_url` and `AWS_ENDPOINT_URL_*` for this service.", name),
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Provisions the transactional outbox on AWS DynamoDB: the stream, the filtered event source mapping, the relay Lambda, its dead-letter queue, the sparse pending index and the reconciler. " +
			"Credentials and region are read like the `hashicorp/aws` provider's: the arguments below first, then the standard AWS environment variables and shared configuration files.",
		Attributes: map[string]schema.Attribute{
			"region": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "AWS region. Defaults to `AWS_REGION`, `AWS_DEFAULT_REGION` or the profile's region.",
			},
			"profile": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Named profile of the shared configuration files. Defaults to `AWS_PROFILE`.",
			},
			"shared_config_files": schema.ListAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Paths of shared configuration files. Defaults to `~/.aws/config`.",
			},
			"shared_credentials_files": schema.ListAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Paths of shared credentials files. Defaults to `~/.aws/credentials`.",
			},
			"endpoint_url": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "One base URL for every AWS service, for a local AWS stack such as `http://127.0.0.1:4566`. Defaults to `AWS_ENDPOINT_URL`.",
			},
			"skip_credentials_validation": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Skip the STS `GetCallerIdentity` check of the credentials. Defaults to `false`.",
			},
		},
		Blocks: map[string]schema.Block{
			"assume_role": schema.SingleNestedBlock{
				MarkdownDescription: "A role to assume with the base credentials.",
				Attributes: map[string]schema.Attribute{
					"role_arn": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "ARN of the role to assume.",
					},
					"session_name": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Session name of the assumed role.",
					},
					"external_id": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "External id required by the role's trust policy.",
					},
				},
			},
			"endpoints": schema.SingleNestedBlock{
				MarkdownDescription: "Endpoint URLs per service, for private endpoints or local stacks.",
				Attributes:          endpointAttrs,
			},
			"default_tags": schema.SingleNestedBlock{
				MarkdownDescription: "Tags added to every resource that supports tags. A resource's own `tags` win on conflicts.",
				Attributes: map[string]schema.Attribute{
					"tags": schema.MapAttribute{
						Optional:            true,
						ElementType:         types.StringType,
						MarkdownDescription: "The tags.",
					},
				},
			},
		},
	}
}

// Configure resolves the AWS configuration and checks the credentials once.
func (p *OutboxProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m OutboxProviderModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	settings, defaultTags, diags := m.settings(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	settings.UserAgent = "terraform-provider-outbox/" + p.version
	cfg, identity, err := awsclient.Load(ctx, settings)
	if err != nil {
		resp.Diagnostics.AddError("Configuring the outbox provider", err.Error())
		return
	}
	data := &ProviderData{AWS: cfg, Identity: identity, DefaultTags: defaultTags, Version: p.version}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.ListResourceData = data
	resp.ActionData = data
}

// settings maps the provider block to awsclient settings. Values unknown at
// plan time cannot configure a client, so they are reported by attribute.
func (m OutboxProviderModel) settings(ctx context.Context) (awsclient.Settings, map[string]string, diag.Diagnostics) {
	var diags diag.Diagnostics
	known := func(p path.Path, v attr.Value) bool {
		if v.IsUnknown() {
			diags.AddAttributeError(p, "Unknown provider setting",
				fmt.Sprintf("%s is not known until apply, so the provider cannot be configured. Use a value known at plan time, or apply the resources it depends on first with -target.", p))
			return false
		}
		return true
	}
	s := awsclient.Settings{}
	if known(path.Root("region"), m.Region) {
		s.Region = m.Region.ValueString()
	}
	if known(path.Root("profile"), m.Profile) {
		s.Profile = m.Profile.ValueString()
	}
	if known(path.Root("endpoint_url"), m.EndpointURL) {
		s.EndpointURL = m.EndpointURL.ValueString()
	}
	if known(path.Root("skip_credentials_validation"), m.SkipCredentialsValidation) {
		s.SkipCredentialsValidation = m.SkipCredentialsValidation.ValueBool()
	}
	if known(path.Root("shared_config_files"), m.SharedConfigFiles) {
		diags.Append(m.SharedConfigFiles.ElementsAs(ctx, &s.SharedConfigFiles, false)...)
	}
	if known(path.Root("shared_credentials_files"), m.SharedCredentialsFiles) {
		diags.Append(m.SharedCredentialsFiles.ElementsAs(ctx, &s.SharedCredentialsFiles, false)...)
	}
	if ar := m.AssumeRole; ar != nil {
		p := path.Root("assume_role")
		if known(p.AtName("role_arn"), ar.RoleARN) && known(p.AtName("session_name"), ar.SessionName) && known(p.AtName("external_id"), ar.ExternalID) {
			s.AssumeRole = &awsclient.AssumeRole{RoleARN: ar.RoleARN.ValueString(), SessionName: ar.SessionName.ValueString(), ExternalID: ar.ExternalID.ValueString()}
		}
	}
	if m.Endpoints != nil {
		s.Endpoints = map[string]string{}
		for name, v := range m.Endpoints.byName() {
			if known(path.Root("endpoints").AtName(name), v) && v.ValueString() != "" {
				s.Endpoints[name] = v.ValueString()
			}
		}
	}
	var tags map[string]string
	if m.DefaultTags != nil && known(path.Root("default_tags").AtName("tags"), m.DefaultTags.Tags) {
		diags.Append(m.DefaultTags.Tags.ElementsAs(ctx, &tags, false)...)
	}
	return s, tags, diags
}

// Resources lists the provider's resources.
func (p *OutboxProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewPipelineResource, NewSubscriptionResource}
}

// DataSources lists the provider's data sources.
func (p *OutboxProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewPipelineDataSource}
}

// ListResources lists the provider's list resources, for `terraform query`.
func (p *OutboxProvider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{NewPipelineListResource, NewSubscriptionListResource}
}

// Actions lists the provider's actions: the outbox subcommands that change
// a pipeline's events.
func (p *OutboxProvider) Actions(context.Context) []func() action.Action {
	return operateActions()
}
