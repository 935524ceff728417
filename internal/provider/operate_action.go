package provider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/operate"
)

// operateCommands are the outbox subcommands served as actions, each as
// outbox_<subcommand>: the action runs the subcommand itself
// (operate.Invoke), with its options as attributes.
var operateCommands = []string{"requeue", "skip", "drain", "replay", "redrive"}

// operateActions returns a constructor of each action.
func operateActions() []func() action.Action {
	out := make([]func() action.Action, 0, len(operateCommands))
	for _, name := range operateCommands {
		out = append(out, func() action.Action { return &OperateAction{command: name} })
	}
	return out
}

var (
	_ action.ActionWithConfigure      = &OperateAction{}
	_ action.ActionWithValidateConfig = &OperateAction{}
)

// OperateAction runs one outbox subcommand on a pipeline.
type OperateAction struct {
	command string
	data    *ProviderData
}

// attributeNames renames the flags whose name would read wrongly as an
// attribute: a list is plural.
var attributeNames = map[string]string{"id": "ids"}

// attributeName is the attribute of the flag: dashes become underscores.
func attributeName(flagName string) string {
	if name, ok := attributeNames[flagName]; ok {
		return name
	}
	return strings.ReplaceAll(flagName, "-", "_")
}

func (a *OperateAction) operation() operate.Operation {
	op, ok := operate.LookupOperation(a.command)
	if !ok {
		panic("outbox has no subcommand " + a.command) // operateCommands names only subcommands
	}
	return op
}

// Metadata names the action outbox_<subcommand>.
func (a *OperateAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + a.command
}

// Configure receives the provider's AWS configuration.
func (a *OperateAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	if data := providerData(req.ProviderData, &resp.Diagnostics); data != nil {
		a.data = data
	}
}

// Schema describes the pipeline and the subcommand's options, from its
// flags.
func (a *OperateAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	op := a.operation()
	attrs := map[string]schema.Attribute{
		"pipeline": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Name of the pipeline, as in `outbox_pipeline`'s `name`. No default: required.",
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"region": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "AWS Region of the pipeline. Defaults to the provider's `region`.",
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
		},
	}
	for _, o := range op.Options {
		attrs[attributeName(o.Flag)] = a.optionAttribute(o)
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: fmt.Sprintf("%s: runs `outbox %s` on a pipeline, with the same checks, dry runs and refusals; "+
			"its output and progress are shown as the action's progress, and an incomplete outcome (the command's exit code 1) fails the action. %s\n\n"+
			"Each attribute besides `pipeline` and `region` is the command's flag of the same name (`dry_run` is `--dry-run`).\n\n"+
			"IAM permissions: %s.",
			op.Summary, op.Name, strings.ReplaceAll(op.Help, "\n", " "), "`"+strings.Join(op.Permissions, "`, `")+"`"),
		Attributes: attrs,
	}
}

// optionAttribute is the attribute of one option.
func (a *OperateAction) optionAttribute(o operate.Option) schema.Attribute {
	desc := optionDescription(o)
	v := optionValidator{command: a.command, flag: o.Flag}
	switch o.Kind {
	case operate.OptionBool:
		return schema.BoolAttribute{Optional: true, MarkdownDescription: desc}
	case operate.OptionList:
		return schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: desc,
			Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(v)}}
	case operate.OptionNumber:
		return schema.Float64Attribute{Optional: true, MarkdownDescription: desc, Validators: []validator.Float64{v}}
	}
	return schema.StringAttribute{Required: o.Required, Optional: !o.Required, MarkdownDescription: desc, Validators: []validator.String{v}}
}

// optionDescription is the flag's usage as a sentence, with its default.
func optionDescription(o operate.Option) string {
	usage := strings.TrimSuffix(o.Usage, " (required)")
	r, n := utf8.DecodeRuneInString(usage)
	desc := string(unicode.ToUpper(r)) + usage[n:] + "."
	switch {
	case o.Required:
		return desc + " No default: required."
	case strings.Contains(o.Usage, "(default"):
		return desc
	case o.Default != "":
		return desc + " Defaults to `" + o.Default + "`."
	}
	return desc + " Unset by default."
}

// ValidateConfig runs the subcommand's own checks once every option is
// known, as the command line does before anything reaches AWS.
func (a *OperateAction) ValidateConfig(ctx context.Context, req action.ValidateConfigRequest, resp *action.ValidateConfigResponse) {
	values, known, diags := a.values(ctx, req.Config)
	resp.Diagnostics.Append(diags...)
	if !known || resp.Diagnostics.HasError() {
		return
	}
	if err := operate.CheckOptions(a.command, values); err != nil {
		a.optionError(&resp.Diagnostics, err)
	}
}

// optionError reports err at the attribute of the option it names.
func (a *OperateAction) optionError(diags *diag.Diagnostics, err error) {
	summary := fmt.Sprintf("Invalid outbox_%s options", a.command)
	if oe := (*operate.OptionError)(nil); errors.As(err, &oe) {
		diags.AddAttributeError(path.Root(attributeName(oe.Flag)), summary, fmt.Sprintf("%s: %v", attributeName(oe.Flag), oe.Err))
		return
	}
	diags.AddError(summary, err.Error()+"\n\n(The attributes are the flags of `outbox "+a.command+"`: `dry_run` is `--dry-run`.)")
}

// Invoke runs the subcommand, sending each line it writes as progress.
func (a *OperateAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	if a.data == nil {
		resp.Diagnostics.AddError("Unconfigured provider", fmt.Sprintf("The outbox provider was not configured before outbox_%s was invoked: report this as a bug of the provider.", a.command))
		return
	}
	values, _, diags := a.values(ctx, req.Config)
	resp.Diagnostics.Append(diags...)
	var name, region types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("pipeline"), &name)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("region"), &region)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cfg := a.data.AWS.Copy()
	if r := region.ValueString(); r != "" {
		cfg.Region = r
	}
	inv := operate.Invocation{Command: a.command, Pipeline: name.ValueString(), Values: values, Line: func(line string) {
		resp.SendProgress(action.InvokeProgressEvent{Message: line})
	}}
	resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf("outbox %s %s (Region %s)", a.command, inv.Pipeline, cfg.Region)})
	if err := operate.Invoke(ctx, cfg, inv); err != nil {
		var oe *operate.OptionError
		if errors.As(err, &oe) {
			a.optionError(&resp.Diagnostics, err)
			return
		}
		resp.Diagnostics.AddError(fmt.Sprintf("Running outbox %s on pipeline %s", a.command, inv.Pipeline), err.Error())
	}
}

// values reads the options that config sets; known is false when one is
// not known yet.
func (a *OperateAction) values(ctx context.Context, config tfsdk.Config) (operate.Values, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	values := operate.Values{}
	known := true
	for _, o := range a.operation().Options {
		v, d := readOption(ctx, config, path.Root(attributeName(o.Flag)), o.Kind)
		diags.Append(d...)
		if v == nil || v.IsNull() {
			continue
		}
		if !v.IsUnknown() {
			vs, d := optionValues(ctx, v)
			diags.Append(d...)
			values[o.Flag] = vs
			continue
		}
		known = false
	}
	return values, known, diags
}

// readOption reads the attribute at p of an option of kind.
func readOption(ctx context.Context, config tfsdk.Config, p path.Path, kind operate.OptionKind) (attr.Value, diag.Diagnostics) {
	switch kind {
	case operate.OptionBool:
		var v types.Bool
		diags := config.GetAttribute(ctx, p, &v)
		return v, diags
	case operate.OptionList:
		var v types.List
		diags := config.GetAttribute(ctx, p, &v)
		return v, diags
	case operate.OptionNumber:
		var v types.Float64
		diags := config.GetAttribute(ctx, p, &v)
		return v, diags
	}
	var v types.String
	diags := config.GetAttribute(ctx, p, &v)
	return v, diags
}

// optionValues are the flag values of an attribute's value.
func optionValues(ctx context.Context, v attr.Value) ([]string, diag.Diagnostics) {
	switch v := v.(type) {
	case types.Bool:
		return []string{strconv.FormatBool(v.ValueBool())}, nil
	case types.Float64:
		return []string{strconv.FormatFloat(v.ValueFloat64(), 'g', -1, 64)}, nil
	case types.List:
		var out []string
		diags := v.ElementsAs(ctx, &out, false)
		return out, diags
	case types.String:
		return []string{v.ValueString()}, nil
	}
	return nil, nil
}

// optionValidator checks a value as the subcommand's flag parses it.
type optionValidator struct{ command, flag string }

func (v optionValidator) Description(context.Context) string {
	return "a value that `outbox " + v.command + " --" + v.flag + "` accepts"
}

func (v optionValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v optionValidator) check(p path.Path, value string, diags *diag.Diagnostics) {
	if err := operate.CheckOption(v.command, v.flag, value); err != nil {
		var oe *operate.OptionError
		if errors.As(err, &oe) {
			err = oe.Err
		}
		diags.AddAttributeError(p, fmt.Sprintf("Invalid outbox_%s option", v.command), fmt.Sprintf("%s: %v", p, err))
	}
}

// ValidateString checks a string option.
func (v optionValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	v.check(req.Path, req.ConfigValue.ValueString(), &resp.Diagnostics)
}

// ValidateFloat64 checks a number option.
func (v optionValidator) ValidateFloat64(_ context.Context, req validator.Float64Request, resp *validator.Float64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	v.check(req.Path, strconv.FormatFloat(req.ConfigValue.ValueFloat64(), 'g', -1, 64), &resp.Diagnostics)
}
