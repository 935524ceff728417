package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestProviderMetadataAndSchema(t *testing.T) {
	t.Parallel()
	var resp provider.MetadataResponse
	New("1.2.3")().Metadata(context.Background(), provider.MetadataRequest{}, &resp)
	if resp.TypeName != "outbox" || resp.Version != "1.2.3" {
		t.Errorf("metadata = %+v", resp)
	}
	var schemaResp provider.SchemaResponse
	New("1.2.3")().Schema(context.Background(), provider.SchemaRequest{}, &schemaResp)
	if diags := schemaResp.Schema.ValidateImplementation(context.Background()); diags.HasError() {
		t.Errorf("schema: %v", diags)
	}
	for name, a := range schemaResp.Schema.Attributes {
		if a.GetMarkdownDescription() == "" {
			t.Errorf("attribute %s has no description", name)
		}
	}
}

func TestProviderSettingsMapping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files, _ := types.ListValueFrom(ctx, types.StringType, []string{"/etc/aws/config"})
	tags, _ := types.MapValueFrom(ctx, types.StringType, map[string]string{"team": "orders"})
	m := OutboxProviderModel{
		Region:                    types.StringValue("eu-west-1"),
		Profile:                   types.StringNull(),
		SharedConfigFiles:         files,
		SharedCredentialsFiles:    types.ListNull(types.StringType),
		EndpointURL:               types.StringValue("http://127.0.0.1:4566"),
		SkipCredentialsValidation: types.BoolValue(true),
		AssumeRole:                &AssumeRoleModel{RoleARN: types.StringValue("arn:aws:iam::1:role/deployer"), SessionName: types.StringNull(), ExternalID: types.StringValue("x")},
		Endpoints:                 &EndpointsModel{Lambda: types.StringValue("http://127.0.0.1:9001")},
		DefaultTags:               &DefaultTagsModel{Tags: tags},
	}
	s, defaultTags, diags := m.settings(ctx)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if s.Region != "eu-west-1" || s.EndpointURL != "http://127.0.0.1:4566" || !s.SkipCredentialsValidation ||
		len(s.SharedConfigFiles) != 1 || s.AssumeRole.RoleARN != "arn:aws:iam::1:role/deployer" || s.AssumeRole.ExternalID != "x" ||
		len(s.Endpoints) != 1 || s.Endpoints["lambda"] != "http://127.0.0.1:9001" || defaultTags["team"] != "orders" {
		t.Errorf("settings = %+v, tags = %v", s, defaultTags)
	}

	m.Region = types.StringUnknown()
	_, _, diags = m.settings(ctx)
	if !diags.HasError() || !strings.Contains(diags[0].Detail(), "region") {
		t.Errorf("an unknown region must be reported: %v", diags)
	}
}
