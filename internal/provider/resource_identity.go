package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// identityVersion is the version of the identity schema of both
// resources. The identity is stable: a change of its attributes is a new
// version, and this one stays readable.
const identityVersion = 0

// identityModel is the resource identity of a pipeline or a subscription,
// shaped as hashicorp/aws's identities of regional resources: the account,
// the Region and the name, which is unique in them.
type identityModel struct {
	AccountID types.String `tfsdk:"account_id"`
	Region    types.String `tfsdk:"region"`
	Name      types.String `tfsdk:"name"`
}

// identitySchema is the identity schema of a resource; what names it ("
// pipeline").
func identitySchema(what string) identityschema.Schema {
	return identityschema.Schema{
		Version: identityVersion,
		Attributes: map[string]identityschema.Attribute{
			"account_id": identityschema.StringAttribute{OptionalForImport: true,
				Description: "AWS account ID of the " + what + ". Defaults to the provider's account when imported."},
			"region": identityschema.StringAttribute{OptionalForImport: true,
				Description: "AWS Region of the " + what + ". Defaults to the provider's Region when imported."},
			"name": identityschema.StringAttribute{RequiredForImport: true,
				Description: "Name of the " + what + ", as its `name` attribute."},
		},
	}
}

// IdentitySchema describes the resource's identity.
func (b *resourceBase) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identitySchema(strings.TrimPrefix(b.what, "outbox "))
}

// identity is the identity of the resource called name, in the provider's
// account and Region.
func (b *resourceBase) identity(name string) identityModel {
	return identityModel{
		AccountID: optString(b.data.Identity.AccountID),
		Region:    types.StringValue(b.data.AWS.Region),
		Name:      types.StringValue(name),
	}
}

// setIdentity records the identity of the resource called name, also when
// Read removes it from the state (Terraform asks for the identity then
// too); nothing when the client has no identity.
func (b *resourceBase) setIdentity(ctx context.Context, id *tfsdk.ResourceIdentity, name string, diags *diag.Diagnostics) {
	if id == nil || b.data == nil || name == "" {
		return
	}
	diags.Append(id.Set(ctx, b.identity(name))...)
}

// importedName is the name to import: the import's ID, or the name of its
// identity, which must be in the provider's account and Region.
func (b *resourceBase) importedName(ctx context.Context, req resource.ImportStateRequest, diags *diag.Diagnostics) (string, bool) {
	if req.ID != "" || req.Identity == nil || b.data == nil {
		return req.ID, true
	}
	var id identityModel
	if d := req.Identity.Get(ctx, &id); d.HasError() {
		diags.Append(d...)
		return "", false
	}
	own := b.identity(id.Name.ValueString())
	for _, f := range []struct {
		attr      string
		got, want types.String
	}{{"account_id", id.AccountID, own.AccountID}, {"region", id.Region, own.Region}} {
		if known(f.got) && f.want.ValueString() != "" && f.got.ValueString() != f.want.ValueString() {
			diags.AddError("Importing "+b.what+" ("+id.Name.ValueString()+")", fmt.Sprintf(
				"identity.%s %s is not the provider's (%s): configure the provider for that %s, or import with a provider block that uses it.",
				f.attr, f.got.ValueString(), f.want.ValueString(), f.attr))
			return "", false
		}
	}
	return id.Name.ValueString(), true
}
