package provider

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The models hold their objects (table, relay, relay.logging...) as
// pointers to structs, which cannot hold an unknown object: `table =
// var.x` with a variable known only at apply. Before a configuration or a
// plan is read into a model, such an object becomes an object of unknown
// attributes, which the mapping treats like any unknown setting; a plan
// written back marks it unknown again.

// objectPaths are the paths of the model type's objects (fields that are
// pointers to structs), parents before children.
func objectPaths(t reflect.Type, at path.Path) []path.Path {
	var out []path.Path
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("tfsdk")
		if name == "" || name == "-" || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
			continue
		}
		p := at.AtName(name)
		out = append(out, p)
		out = append(out, objectPaths(f.Type.Elem(), p)...)
	}
	return out
}

// frameworkPath is the path of a tftypes attribute path made of attribute
// names; false for one with another step (an element of a list or map).
func frameworkPath(tp *tftypes.AttributePath) (path.Path, bool) {
	p := path.Empty()
	for _, s := range tp.Steps() {
		name, ok := s.(tftypes.AttributeName)
		if !ok {
			return path.Empty(), false
		}
		p = p.AtName(string(name))
	}
	return p, true
}

func containsPath(paths []path.Path, p path.Path) bool {
	return slices.ContainsFunc(paths, p.Equal)
}

// knownObjects returns raw with every unknown object at one of the paths
// replaced by an object of unknown attributes (its own objects likewise),
// and the paths of the objects it replaced.
func knownObjects(raw tftypes.Value, objects []path.Path) (tftypes.Value, []path.Path, error) {
	var replaced []path.Path
	out, err := tftypes.Transform(raw, func(tp *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		p, ok := frameworkPath(tp)
		if !ok || v.IsKnown() || !containsPath(objects, p) {
			return v, nil
		}
		replaced = append(replaced, p)
		return unknownAttributes(v.Type(), p, objects), nil
	})
	return out, replaced, err
}

// unknownAttributes is a known object of type t at p whose attributes are
// unknown, its objects among objects recursively so.
func unknownAttributes(t tftypes.Type, p path.Path, objects []path.Path) tftypes.Value {
	obj, ok := t.(tftypes.Object)
	if !ok {
		return tftypes.NewValue(t, tftypes.UnknownValue)
	}
	vals := make(map[string]tftypes.Value, len(obj.AttributeTypes))
	for name, at := range obj.AttributeTypes {
		if containsPath(objects, p.AtName(name)) {
			vals[name] = unknownAttributes(at, p.AtName(name), objects)
			continue
		}
		vals[name] = tftypes.NewValue(at, tftypes.UnknownValue)
	}
	return tftypes.NewValue(obj, vals)
}

// markUnknown returns raw with the objects at the paths unknown.
func markUnknown(raw tftypes.Value, paths []path.Path) (tftypes.Value, error) {
	if len(paths) == 0 {
		return raw, nil
	}
	return tftypes.Transform(raw, func(tp *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if p, ok := frameworkPath(tp); ok && containsPath(paths, p) {
			return tftypes.NewValue(v.Type(), tftypes.UnknownValue), nil
		}
		return v, nil
	})
}

// getConfig reads a configuration into the model that m points to.
func getConfig(ctx context.Context, c tfsdk.Config, m any) diag.Diagnostics {
	raw, _, err := knownObjects(c.Raw, objectPaths(reflect.TypeOf(m).Elem(), path.Empty()))
	if err != nil {
		return objectsError(err)
	}
	c.Raw = raw
	return c.Get(ctx, m)
}

// getPlan reads the plan of a create or an update into the model that m
// points to, and returns the paths of its unknown objects, for setPlan. It
// returns false for a destroy, which has nothing to plan, and after an
// error, which it adds to resp.
func getPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, m any) ([]path.Path, bool) {
	if req.Plan.Raw.IsNull() {
		return nil, false // destroy
	}
	raw, unknown, err := knownObjects(req.Plan.Raw, objectPaths(reflect.TypeOf(m).Elem(), path.Empty()))
	if err != nil {
		resp.Diagnostics.Append(objectsError(err)...)
		return nil, false
	}
	p := req.Plan
	p.Raw = raw
	resp.Diagnostics.Append(p.Get(ctx, m)...)
	return unknown, !resp.Diagnostics.HasError()
}

// setPlan writes the model that m points to into the plan, with the
// objects that getPlan found unknown unknown again.
func setPlan(ctx context.Context, p *tfsdk.Plan, m any, unknown []path.Path) diag.Diagnostics {
	diags := p.Set(ctx, m)
	if diags.HasError() {
		return diags
	}
	raw, err := markUnknown(p.Raw, unknown)
	if err != nil {
		return objectsError(err)
	}
	p.Raw = raw
	return diags
}

func objectsError(err error) diag.Diagnostics {
	var diags diag.Diagnostics
	diags.AddError("Reading unknown objects", fmt.Sprintf("%v: report this as a bug of the provider.", err))
	return diags
}
