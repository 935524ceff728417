package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// resourceBase is what outbox_pipeline and outbox_subscription share: the
// provider's data that Configure receives, their names, and the opening
// and closing steps of their operations.
type resourceBase struct {
	data *ProviderData
	// suffix follows the provider's name in the type name: "_pipeline".
	suffix string
	// what names the resource in diagnostics: "outbox pipeline".
	what string
}

// Metadata names the resource.
func (b *resourceBase) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + b.suffix
}

// Configure receives the provider's AWS configuration.
func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if data := providerData(req.ProviderData, &resp.Diagnostics); data != nil {
		b.data = data
	}
}

// providerData is the provider's data given to Configure; nil before the
// provider is configured, or with an error if it is of another type.
func providerData(v any, diags *diag.Diagnostics) *ProviderData {
	if v == nil {
		return nil
	}
	data, ok := v.(*ProviderData)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *ProviderData, got %T: report this as a bug of the provider", v))
	}
	return data
}

func (b *resourceBase) defaultTags() map[string]string {
	if b.data == nil {
		return nil
	}
	return b.data.DefaultTags
}

// begin opens an operation: the provider must be configured, and reading
// the plan or state (their diagnostics given) must have succeeded.
func (b *resourceBase) begin(diags *diag.Diagnostics, reads ...diag.Diagnostics) bool {
	if b.data == nil {
		diags.AddError("Unconfigured provider", fmt.Sprintf("The outbox provider was not configured before the outbox%s resource was used: report this as a bug of the provider.", b.suffix))
		return false
	}
	for _, r := range reads {
		diags.Append(r...)
	}
	return !diags.HasError()
}

// failed reports an operation's error ("Creating outbox pipeline (orders)").
func (b *resourceBase) failed(diags *diag.Diagnostics, operation, name, detail string) {
	diags.AddError(fmt.Sprintf("%s %s (%s)", operation, b.what, name), detail)
}

// observed reports whether Read observed the resource (its name given),
// err being the error of reading it: a resource of which nothing remains
// (notFound) is removed from the state, and another error is reported.
func (b *resourceBase) observed(ctx context.Context, err, notFound error, name string, resp *resource.ReadResponse) bool {
	if errors.Is(err, notFound) {
		resp.State.RemoveResource(ctx)
		// Terraform asks for the identity of a removed resource too.
		b.setIdentity(ctx, resp.Identity, name, &resp.Diagnostics)
		return false
	}
	if err != nil {
		b.failed(&resp.Diagnostics, "Reading", name, err.Error())
		return false
	}
	return true
}

// lookUp runs lookup, on import, for the name that the import id gives
// (example shows one). It reports an empty id with the command, a lookup
// that returns notFound with absent's detail, and another error; false
// after one.
func (b *resourceBase) lookUp(id, example string, diags *diag.Diagnostics, notFound error, absent func(name string) string, lookup func(name string) error) bool {
	name := strings.TrimSpace(id)
	if name == "" {
		diags.AddError("Importing "+b.what, fmt.Sprintf("The import id is the %s's name, as in `terraform import outbox%s.%s %s`.", strings.TrimPrefix(b.what, "outbox "), b.suffix, example, example))
		return false
	}
	if !b.begin(diags) {
		return false
	}
	switch err := lookup(name); {
	case errors.Is(err, notFound):
		b.failed(diags, "Importing", name, absent(name))
	case err != nil:
		b.failed(diags, "Importing", name, err.Error())
	}
	return !diags.HasError()
}

// plannedTags merges the provider's default tags with tags into tagsAll:
// unknown while a tag is, at plan time. It returns the merged tags and
// whether they are known.
func (b *resourceBase) plannedTags(ctx context.Context, tags types.Map, tagsAll *types.Map, diags *diag.Diagnostics) (map[string]string, bool) {
	merged, known, d := mergedTags(ctx, b.defaultTags(), tags)
	diags.Append(d...)
	*tagsAll = types.MapUnknown(types.StringType)
	if known {
		*tagsAll = tagsValue(merged)
	}
	return merged, known
}

// configuredTags are the tags that a configuration sets: nil while they are
// unset or unknown.
func configuredTags(ctx context.Context, tags types.Map, diags *diag.Diagnostics) map[string]string {
	var out map[string]string
	if !tags.IsUnknown() && !tags.IsNull() {
		diags.Append(tags.ElementsAs(ctx, &out, true)...)
	}
	return out
}

// stateTags are the tags a state records in tags_all.
func stateTags(ctx context.Context, tagsAll types.Map, diags *diag.Diagnostics) map[string]string {
	tags := map[string]string{}
	if !tagsAll.IsNull() && !tagsAll.IsUnknown() {
		diags.Append(tagsAll.ElementsAs(ctx, &tags, false)...)
	}
	return tags
}

// operationContext bounds an operation by its timeout (the timeouts
// attribute's, else def), and logs its long waits.
func operationContext(ctx context.Context, timeout func(context.Context, time.Duration) (time.Duration, diag.Diagnostics), def time.Duration, diags *diag.Diagnostics) (context.Context, context.CancelFunc) {
	t, d := timeout(ctx, def)
	diags.Append(d...)
	return context.WithTimeout(withWaitLog(ctx), t)
}
