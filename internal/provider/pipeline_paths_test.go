package provider

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// specLeaves returns the paths of the leaf fields of a struct type, as
// provision.ValidationError names them (Mapping.BatchSize).
func specLeaves(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := prefix + f.Name
		ft := f.Type
		if ft.Kind() == reflect.Struct && (ft.PkgPath() == t.PkgPath() || ft == reflect.TypeFor[provision.TargetSpec]()) {
			out = append(out, specLeaves(ft, name+".")...)
			continue
		}
		out = append(out, name)
	}
	return out
}

// Every field of provision.Spec has an attribute (or a block that decides
// it), and every spec tag names a field of provision.Spec at an attribute of
// the schema: a new setting without its mapping fails here.
func TestSpecFieldPaths(t *testing.T) {
	t.Parallel()
	leaves := specLeaves(reflect.TypeFor[provision.Spec](), "")
	if len(leaves) < 30 {
		t.Fatalf("found only %d fields of provision.Spec: %v", len(leaves), leaves)
	}
	for _, f := range leaves {
		if _, ok := attributePath(f); !ok {
			t.Errorf("provision.Spec field %s has no attribute: tag the model's field with spec:%q, or list it in specFieldsWithoutAttribute", f, f)
		}
	}
	var sr resource.SchemaResponse
	NewPipelineResource().Schema(context.Background(), resource.SchemaRequest{}, &sr)
	for field, p := range specFieldPaths() {
		if !contains(leaves, field) {
			t.Errorf("spec tag %q on %s names no field of provision.Spec", field, p)
		}
		if _, diags := sr.Schema.AttributeAtPath(context.Background(), p); diags.HasError() {
			t.Errorf("spec tag %q: %s is not an attribute of the schema: %v", field, p, diags)
		}
	}
	for field, block := range specFieldsWithoutAttribute {
		if !contains(leaves, field) {
			t.Errorf("specFieldsWithoutAttribute: %q is no field of provision.Spec", field)
		}
		if _, ok := sr.Schema.Attributes[block].(schema.SingleNestedAttribute); !ok {
			t.Errorf("specFieldsWithoutAttribute: %q is no object", block)
		}
	}
	// Every replacement field has its path.
	for _, f := range provision.ReplacementFields(provision.Spec{Name: "a"}, provision.Spec{
		Name: "b", Table: provision.TableSpec{Existing: true, Name: "t2", PartitionKey: "p", SortKey: "s", PendingIndexName: "i2", TTLAttribute: "x"},
	}) {
		if _, ok := specFieldPaths()[f]; !ok {
			t.Errorf("replacement field %s has no attribute", f)
		}
	}
}

func TestFieldWithoutAttribute(t *testing.T) {
	t.Parallel()
	if p, _ := attributePath("Target.Type"); !p.Equal(path.Root("target")) {
		t.Errorf("Target.Type at %s", p)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// Every optional attribute of outbox_pipeline says what it is when it is
// not set: its default, or what unset means.
func TestPipelineDefaultsDocumented(t *testing.T) {
	t.Parallel()
	var sr resource.SchemaResponse
	NewPipelineResource().Schema(context.Background(), resource.SchemaRequest{}, &sr)
	check := func(name string, a interface {
		IsOptional() bool
		GetMarkdownDescription() string
	}) {
		d := strings.ToLower(a.GetMarkdownDescription())
		if a.IsOptional() && !strings.Contains(d, "default") && !strings.Contains(d, "unset") {
			t.Errorf("%s: the description states no default: %q", name, a.GetMarkdownDescription())
		}
	}
	eachAttribute(sr.Schema.Attributes, "", func(n string, a schema.Attribute) { check(n, a) })
}
