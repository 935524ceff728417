package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
)

// TestIdentitySchemasAreStable pins both resources' identity schema:
// Terraform keeps identities in state and in import blocks, so a change
// of an attribute or of what import needs is a new version, never an edit
// of this one.
func TestIdentitySchemasAreStable(t *testing.T) {
	want := map[string]struct{ required, optional bool }{
		"account_id": {optional: true},
		"region":     {optional: true},
		"name":       {required: true},
	}
	for _, r := range []resource.ResourceWithIdentity{NewPipelineResource().(*PipelineResource), NewSubscriptionResource().(*SubscriptionResource)} {
		var resp resource.IdentitySchemaResponse
		r.IdentitySchema(context.Background(), resource.IdentitySchemaRequest{}, &resp)
		s := resp.IdentitySchema
		if s.Version != 0 || len(s.Attributes) != len(want) {
			t.Errorf("%T: identity schema version %d with %d attributes, want version 0 with %d", r, s.Version, len(s.Attributes), len(want))
		}
		for name, w := range want {
			a, ok := s.Attributes[name].(identityschema.StringAttribute)
			if !ok || a.RequiredForImport != w.required || a.OptionalForImport != w.optional || a.Description == "" {
				t.Errorf("%T: identity attribute %s is %#v, want a described string, required for import %v, optional %v", r, name, s.Attributes[name], w.required, w.optional)
			}
		}
	}
}
