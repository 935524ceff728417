package provider

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
)

// The schema states a setting's description; the declaration (the model's
// spec tag) gives the rest. An attribute built by intSetting, stringSetting
// or boolSetting gets its default from the default Spec, stated in its
// description ("Defaults to `100`."); an attribute whose Spec field has a
// limit gets the limit's validator, and its description's {limit} reads
// the allowed values ("1 to 10000").

// limitMark is where a description states the allowed values.
const limitMark = "{limit}"

// intSetting is an optional whole number whose default is declared.
func intSetting(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{Optional: true, Computed: true, CustomType: wholeNumberType{}, MarkdownDescription: desc}
}

// stringSetting is an optional string whose default is declared.
func stringSetting(desc string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: desc}
}

// boolSetting is an optional bool whose default is declared.
func boolSetting(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, Computed: true, MarkdownDescription: desc}
}

// optionalIntAttr is an optional whole number without a default: unset,
// it is null.
func optionalIntAttr(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{Optional: true, CustomType: wholeNumberType{}, MarkdownDescription: desc}
}

// settingsDeclaration is what declareSettings completes a schema from.
type settingsDeclaration struct {
	// model is the resource's model type.
	model reflect.Type
	// defaults is the resource's Spec with its defaults.
	defaults any
	// limit returns the limit of a Spec field, if it has one.
	limit func(field string) (validation.Limit, bool)
	// summary opens every diagnostic of a limit.
	summary string
}

// declareSettings completes attrs, the attributes of d.model, from the
// settings' declarations.
func declareSettings(attrs map[string]schema.Attribute, d settingsDeclaration) {
	declareObject(attrs, d.model, d)
}

func declareObject(attrs map[string]schema.Attribute, model reflect.Type, d settingsDeclaration) {
	for i := range model.NumField() {
		f := model.Field(i)
		name := f.Tag.Get("tfsdk")
		a, ok := attrs[name]
		if !ok {
			continue
		}
		if nested, ok := a.(schema.SingleNestedAttribute); ok && f.Type.Kind() == reflect.Pointer {
			declareObject(nested.Attributes, f.Type.Elem(), d)
			if nested.Default != nil {
				nested.Default = objectdefault.StaticValue(defaultObject(nested.Attributes))
			}
			attrs[name] = nested
			continue
		}
		if t, ok := parseSpecTag(f.Tag.Get("spec")); ok {
			attrs[name] = d.declare(a, t, f.Type)
		}
	}
}

// declare completes one attribute: its default, limit and description.
func (d settingsDeclaration) declare(a schema.Attribute, t specTag, typ reflect.Type) schema.Attribute {
	var limit validation.Limit
	if d.limit != nil {
		limit, _ = d.limit(t.field)
	}
	desc := a.GetMarkdownDescription()
	if limit != nil {
		desc = strings.ReplaceAll(desc, limitMark, limit.Describe())
	}
	def, hasDefault := declaredDefault(d.defaults, t, typ)
	wantsDefault := a.IsOptional() && a.IsComputed() && !hasOwnDefault(a)
	if wantsDefault && !hasDefault {
		panic(fmt.Sprintf("the setting %s has no default in its Spec", t.field))
	}
	lv := limitValidator{limit: limit, summary: d.summary}
	switch a := a.(type) {
	case schema.Int64Attribute:
		if n, ok := def.(types.Int64); ok && wantsDefault {
			a.Default, desc = int64default.StaticInt64(n.ValueInt64()), withDefault(desc, fmt.Sprint(n.ValueInt64()))
		}
		if limit != nil {
			a.Validators = append(a.Validators, lv)
		}
		a.MarkdownDescription = desc
		return a
	case schema.StringAttribute:
		if v, ok := def.(types.String); ok && wantsDefault {
			a.Default, desc = stringdefault.StaticString(v.ValueString()), withDefault(desc, fmt.Sprintf("%q", v.ValueString()))
		}
		if limit != nil {
			a.Validators = append(a.Validators, lv)
		}
		a.MarkdownDescription = desc
		return a
	case schema.BoolAttribute:
		if b, ok := def.(types.Bool); ok && wantsDefault {
			a.Default, desc = booldefault.StaticBool(b.ValueBool()), withDefault(desc, fmt.Sprint(b.ValueBool()))
		}
		a.MarkdownDescription = desc
		return a
	}
	return a
}

// declaredDefault is the attribute value of the tag's field in the Spec
// with defaults; false without one.
func declaredDefault(defaults any, t specTag, typ reflect.Type) (attr.Value, bool) {
	return t.value(t.fieldIn(reflect.ValueOf(defaults)), typ)
}

// limitValidator checks a configured value against its Spec field's
// limit, with the message of the Spec's own check (fieldDiagnostic), so
// that the framework, which drops a diagnostic it has already, shows one
// when both report the same value.
type limitValidator struct {
	limit   validation.Limit
	summary string
}

var (
	_ validator.Int64  = limitValidator{}
	_ validator.String = limitValidator{}
)

func (v limitValidator) Description(context.Context) string {
	return strings.ReplaceAll(v.limit.Describe(), "`", "")
}

func (v limitValidator) MarkdownDescription(context.Context) string { return v.limit.Describe() }

func (v limitValidator) ValidateInt64(_ context.Context, req validator.Int64Request, resp *validator.Int64Response) {
	if known(req.ConfigValue) {
		v.check(req.Path, req.ConfigValue.ValueInt64(), &resp.Diagnostics)
	}
}

func (v limitValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if known(req.ConfigValue) && req.ConfigValue.ValueString() != "" {
		v.check(req.Path, req.ConfigValue.ValueString(), &resp.Diagnostics)
	}
}

func (v limitValidator) check(p path.Path, value any, diags *diag.Diagnostics) {
	if problem, fix := v.limit.Check(value); problem != "" {
		diags.Append(fieldDiagnostic(v.summary, p, problem, fix))
	}
}

// fieldDiagnostic is the error of a setting at p: "<attribute> <problem>:
// <fix>.", as every check of a Spec field reads.
func fieldDiagnostic(summary string, p path.Path, problem, fix string) diag.Diagnostic {
	return diag.NewAttributeErrorDiagnostic(p, summary, fmt.Sprintf("%s %s: %s.", dotted(p), problem, fix))
}

// hasOwnDefault reports whether the schema gives a its default itself.
func hasOwnDefault(a schema.Attribute) bool {
	switch a := a.(type) {
	case schema.Int64Attribute:
		return a.Default != nil
	case schema.StringAttribute:
		return a.Default != nil
	case schema.BoolAttribute:
		return a.Default != nil
	}
	return true
}
