package provider

import (
	"reflect"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/path"
)

// The attribute of each field of pipeline.Spec is given once, by the
// `spec` struct tag of the model's field (`spec:"Mapping.BatchSize"` on
// relay.batch_size). Validation errors, replacements and drift are mapped
// to attribute paths from these tags; TestSpecFieldPaths walks every field
// of pipeline.Spec and fails on one without an attribute.

var specFieldPaths = sync.OnceValue(func() map[string]path.Path { return fieldPaths(reflect.TypeFor[PipelineResourceModel]()) })

// fieldPaths maps the Spec fields that the settings of a model type set
// to their attribute paths.
func fieldPaths(model reflect.Type) map[string]path.Path {
	out := map[string]path.Path{}
	walkModel(model, path.Empty(), func(p path.Path, f reflect.StructField) {
		if t, ok := parseSpecTag(f.Tag.Get("spec")); ok {
			out[t.field] = p
		}
	})
	return out
}

// walkModel calls fn for every attribute field of a model struct type, with
// its attribute path, descending into objects (pointers to structs).
func walkModel(t reflect.Type, at path.Path, fn func(path.Path, reflect.StructField)) {
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("tfsdk")
		if name == "" || name == "-" {
			continue
		}
		p := at.AtName(name)
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			walkModel(f.Type.Elem(), p, fn)
			continue
		}
		fn(p, f)
	}
}

// blockPresent reports whether the model's object called name is present.
func blockPresent(m *PipelineResourceModel, name string) bool {
	v := reflect.ValueOf(m).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("tfsdk") == name {
			f := v.Field(i)
			return f.Kind() != reflect.Pointer || !f.IsNil()
		}
	}
	return false
}

// attributePath returns the attribute path of a field of pipeline.Spec, and
// whether there is one. A field without its own attribute is reported on
// the nearest one that sets it (Target.Type on target).
func attributePath(field string) (path.Path, bool) {
	if p, ok := specFieldPaths()[field]; ok {
		return p, true
	}
	if block, ok := specFieldsWithoutAttribute[field]; ok {
		return path.Root(block), true
	}
	return path.Empty(), false
}

// specFieldsWithoutAttribute are the fields of pipeline.Spec that no
// attribute sets on its own, with the object that decides them.
var specFieldsWithoutAttribute = map[string]string{
	// target.topic_arn set means sns, else eventbridge.
	"Target.Type": "target",
	// The reconciler's concurrency is not configurable.
	"Reconciler.Function.ReservedConcurrency": "reconciler",
}

// walkModelValues calls fn for every attribute value of a model, with its
// path and field, descending into present objects.
func walkModelValues(v reflect.Value, at path.Path, fn func(path.Path, reflect.StructField, reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("tfsdk")
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct {
			if !f.IsNil() {
				walkModelValues(f.Elem(), at.AtName(name), fn)
			}
			continue
		}
		fn(at.AtName(name), t.Field(i), f)
	}
}
