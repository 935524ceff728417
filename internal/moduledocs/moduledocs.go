// Package moduledocs writes the inputs and outputs tables of a Terraform
// module's README, between <!-- BEGIN_TF_DOCS --> and <!-- END_TF_DOCS -->,
// from the module's variables, outputs and requirements, as terraform-docs
// does. tools/tfdocs is its command.
package moduledocs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Markers around the generated part of a module's README, as terraform-docs
// writes them.
const (
	DocsBegin = "<!-- BEGIN_TF_DOCS -->"
	DocsEnd   = "<!-- END_TF_DOCS -->"
)

// ModuleDoc is what a module's documentation tables list.
type ModuleDoc struct {
	RequiredVersion string
	Providers       []ProviderRequirement
	Resources       []string
	Variables       []Variable
	Outputs         []Output
}

// ProviderRequirement is an entry of required_providers.
type ProviderRequirement struct {
	Name, Source, Version string
}

// Variable is an input variable of a module.
type Variable struct {
	Name        string
	Description string
	Type        string
	// Default is the default's source text; empty when the variable is
	// required.
	Default  string
	Required bool
}

// Output is an output value of a module.
type Output struct {
	Name        string
	Description string
}

var moduleSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "terraform"},
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "output", LabelNames: []string{"name"}},
	{Type: "resource", LabelNames: []string{"type", "name"}},
	{Type: "data", LabelNames: []string{"type", "name"}},
	{Type: "module", LabelNames: []string{"name"}},
	{Type: "provider", LabelNames: []string{"name"}},
	{Type: "locals"},
	{Type: "moved"},
	{Type: "import"},
	{Type: "check", LabelNames: []string{"name"}},
}}

// ReadModuleDoc parses the *.tf files of the module in dir.
func ReadModuleDoc(dir string) (*ModuleDoc, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no .tf files", dir)
	}
	sort.Strings(files)
	doc := &ModuleDoc{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		file, diags := hclsyntax.ParseConfig(src, f, hcl.InitialPos)
		if diags.HasErrors() {
			return nil, diags
		}
		content, diags := file.Body.Content(moduleSchema)
		if diags.HasErrors() {
			return nil, diags
		}
		for _, b := range content.Blocks {
			if err := doc.add(b, src); err != nil {
				return nil, fmt.Errorf("%s: %w", b.DefRange, err)
			}
		}
	}
	sort.Slice(doc.Variables, func(i, j int) bool { return doc.Variables[i].Name < doc.Variables[j].Name })
	sort.Slice(doc.Outputs, func(i, j int) bool { return doc.Outputs[i].Name < doc.Outputs[j].Name })
	sort.Strings(doc.Resources)
	sort.Slice(doc.Providers, func(i, j int) bool { return doc.Providers[i].Name < doc.Providers[j].Name })
	return doc, nil
}

// add records what block b of a module file (whose text is src) adds to
// the tables.
func (d *ModuleDoc) add(b *hcl.Block, src []byte) error {
	switch b.Type {
	case "resource", "data":
		d.addResource(b)
	case "terraform":
		return d.addRequirements(b)
	case "variable":
		return d.addVariable(b, src)
	case "output":
		return d.addOutput(b)
	}
	return nil
}

// addResource lists a resource or data block as type.name (data.type.name).
func (d *ModuleDoc) addResource(b *hcl.Block) {
	prefix := ""
	if b.Type == "data" {
		prefix = "data."
	}
	d.Resources = append(d.Resources, prefix+b.Labels[0]+"."+b.Labels[1])
}

// addRequirements reads required_version and required_providers of a
// terraform block.
func (d *ModuleDoc) addRequirements(b *hcl.Block) error {
	body, ok := b.Body.(*hclsyntax.Body)
	if !ok {
		return errors.New("terraform block is not native syntax")
	}
	if a, ok := body.Attributes["required_version"]; ok {
		v, err := stringValue(a.Expr)
		if err != nil {
			return err
		}
		d.RequiredVersion = v
	}
	for _, rp := range body.Blocks {
		if rp.Type != "required_providers" {
			continue
		}
		for name, a := range rp.Body.Attributes {
			p, err := providerRequirement(name, a.Expr)
			if err != nil {
				return err
			}
			d.Providers = append(d.Providers, p)
		}
	}
	return nil
}

// providerRequirement reads one entry of required_providers: an object
// with source and version.
func providerRequirement(name string, e hclsyntax.Expression) (ProviderRequirement, error) {
	p := ProviderRequirement{Name: name}
	obj, ok := e.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return p, nil
	}
	for _, item := range obj.Items {
		k := hcl.ExprAsKeyword(item.KeyExpr)
		v, err := stringValue(item.ValueExpr)
		if err != nil {
			return p, err
		}
		switch k {
		case "source":
			p.Source = v
		case "version":
			p.Version = v
		}
	}
	return p, nil
}

// addVariable reads a variable's description, type and default.
func (d *ModuleDoc) addVariable(b *hcl.Block, src []byte) error {
	body, ok := b.Body.(*hclsyntax.Body)
	if !ok {
		return errors.New("variable block is not native syntax")
	}
	v := Variable{Name: b.Labels[0], Required: true}
	for name, a := range body.Attributes {
		switch name {
		case "description":
			s, err := stringValue(a.Expr)
			if err != nil {
				return err
			}
			v.Description = s
		case "type":
			v.Type = sourceText(a.Expr.Range(), src)
		case "default":
			v.Default = sourceText(a.Expr.Range(), src)
			v.Required = false
		}
	}
	d.Variables = append(d.Variables, v)
	return nil
}

// addOutput reads an output's description.
func (d *ModuleDoc) addOutput(b *hcl.Block) error {
	attrs, diags := b.Body.JustAttributes()
	if diags.HasErrors() {
		return diags
	}
	o := Output{Name: b.Labels[0]}
	if a, ok := attrs["description"]; ok {
		s, err := stringValue(a.Expr)
		if err != nil {
			return err
		}
		o.Description = s
	}
	d.Outputs = append(d.Outputs, o)
	return nil
}

func stringValue(e hcl.Expression) (string, error) {
	v, diags := e.Value(nil)
	if diags.HasErrors() {
		return "", diags
	}
	if v.IsNull() || !v.IsKnown() || v.Type().FriendlyName() != "string" {
		return "", fmt.Errorf("%s: expected a literal string", e.Range())
	}
	return v.AsString(), nil
}

func sourceText(r hcl.Range, src []byte) string {
	return string(bytes.TrimSpace(src[r.Start.Byte:r.End.Byte]))
}

// Markdown renders the tables that go between DocsBegin and DocsEnd.
func (d *ModuleDoc) Markdown() string {
	var b strings.Builder
	b.WriteString("## Requirements\n\n| Name | Version |\n|------|---------|\n")
	fmt.Fprintf(&b, "| terraform | `%s` |\n", d.RequiredVersion)
	for _, p := range d.Providers {
		fmt.Fprintf(&b, "| %s (`%s`) | `%s` |\n", p.Name, p.Source, p.Version)
	}
	b.WriteString("\n## Resources\n\n| Name |\n|------|\n")
	for _, r := range d.Resources {
		fmt.Fprintf(&b, "| `%s` |\n", r)
	}
	b.WriteString("\n## Inputs\n\n| Name | Description | Type | Default | Required |\n|------|-------------|------|---------|:--------:|\n")
	for _, v := range d.Variables {
		def, req := "n/a", "yes"
		if !v.Required {
			def, req = code(v.Default), "no"
		}
		fmt.Fprintf(&b, "| <a name=\"input_%s\"></a> [%s](#input_%s) | %s | %s | %s | %s |\n",
			v.Name, v.Name, v.Name, cell(v.Description), code(v.Type), def, req)
	}
	b.WriteString("\n## Outputs\n\n| Name | Description |\n|------|-------------|\n")
	for _, o := range d.Outputs {
		fmt.Fprintf(&b, "| <a name=\"output_%s\"></a> [%s](#output_%s) | %s |\n", o.Name, o.Name, o.Name, cell(o.Description))
	}
	return b.String()
}

// cell makes text fit one table cell.
func cell(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// code renders source text in a table cell: inline code when it is one
// line, a <pre> block otherwise.
func code(s string) string {
	if !strings.Contains(s, "\n") {
		return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
	}
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "&#124;").Replace(s)
	return "<pre>" + strings.ReplaceAll(s, "\n", "<br/>") + "</pre>"
}

// RenderReadme returns readme with the part between DocsBegin and DocsEnd
// replaced by doc's tables.
func RenderReadme(readme string, doc *ModuleDoc) (string, error) {
	begin := strings.Index(readme, DocsBegin)
	end := strings.Index(readme, DocsEnd)
	if begin < 0 || end < begin {
		return "", fmt.Errorf("the README has no %s ... %s section", DocsBegin, DocsEnd)
	}
	return readme[:begin] + DocsBegin + "\n" + doc.Markdown() + readme[end:], nil
}

// UpdateModuleReadme rewrites the tables of dir/README.md from the module in
// dir. It reports whether the file changed.
func UpdateModuleReadme(dir string) (bool, error) {
	doc, err := ReadModuleDoc(dir)
	if err != nil {
		return false, err
	}
	path := filepath.Join(dir, "README.md")
	old, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	updated, err := RenderReadme(string(old), doc)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if updated == string(old) {
		return false, nil
	}
	return true, os.WriteFile(path, []byte(updated), 0o644)
}
