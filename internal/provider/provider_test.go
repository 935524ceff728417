package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
)

func TestProviderMetadata(t *testing.T) {
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
}
