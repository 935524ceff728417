package moduledocs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The module's README tables must list every variable and output as they
// are: regenerate them with go run ./tools/tfdocs modules/outbox-pipeline.
func TestModuleReadmeUpToDate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "modules", "outbox-pipeline")
	doc, err := ReadModuleDoc(dir)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := RenderReadme(string(readme), doc)
	if err != nil {
		t.Fatal(err)
	}
	if want != string(readme) {
		t.Errorf("%s/README.md is stale: run go run ./tools/tfdocs modules/outbox-pipeline", dir)
	}
	for _, v := range doc.Variables {
		if v.Description == "" || v.Type == "" {
			t.Errorf("variable %s needs a type and a description", v.Name)
		}
		if !strings.Contains(string(readme), `name="input_`+v.Name+`"`) {
			t.Errorf("variable %s is missing from the README", v.Name)
		}
	}
	for _, o := range doc.Outputs {
		if o.Description == "" {
			t.Errorf("output %s needs a description", o.Name)
		}
		if !strings.Contains(string(readme), `name="output_`+o.Name+`"`) {
			t.Errorf("output %s is missing from the README", o.Name)
		}
	}
	if len(doc.Variables) == 0 || len(doc.Outputs) == 0 {
		t.Errorf("parsed %d variables and %d outputs", len(doc.Variables), len(doc.Outputs))
	}
}

func TestReadModuleDocAndRender(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("versions.tf", `terraform {
  required_version = ">= 1.5"
  required_providers {
    outbox = { source = "outboxkit/outbox", version = ">= 0.1.0" }
  }
}`)
	write("variables.tf", `variable "name" {
  description = "The | name."
  type        = string
}
variable "settings" {
  description = <<-EOT
    Two
    lines.
  EOT
  type = object({
    a = optional(number)
  })
  default = {}
}`)
	write("main.tf", `resource "outbox_pipeline" "this" { name = var.name }`)
	write("outputs.tf", `output "arn" {
  description = "The ARN."
  value       = outbox_pipeline.this.table_arn
}
output "undocumented" { value = 1 }`)
	doc, err := ReadModuleDoc(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Variables) != 2 || !doc.Variables[0].Required || doc.Variables[1].Required || doc.Variables[1].Default != "{}" {
		t.Errorf("variables = %+v", doc.Variables)
	}
	if len(doc.Outputs) != 2 || doc.Outputs[1].Description != "" {
		t.Errorf("outputs = %+v", doc.Outputs)
	}
	md := doc.Markdown()
	for _, want := range []string{
		"| terraform | `>= 1.5` |",
		"| outbox (`outboxkit/outbox`) | `>= 0.1.0` |",
		"| `outbox_pipeline.this` |",
		`[name](#input_name) | The \| name. | ` + "`string`" + ` | n/a | yes |`,
		`[settings](#input_settings) | Two lines. | <pre>object({<br/>    a = optional(number)<br/>  })</pre> | ` + "`{}`" + ` | no |`,
		"[arn](#output_arn) | The ARN. |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	out, err := RenderReadme("# m\n\n"+DocsBegin+"\nold\n"+DocsEnd+"\ntail\n", doc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "old") || !strings.HasSuffix(out, DocsEnd+"\ntail\n") || !strings.HasPrefix(out, "# m\n\n"+DocsBegin+"\n## Requirements") {
		t.Errorf("rendered README:\n%s", out)
	}
	if _, err := RenderReadme("no markers", doc); err == nil {
		t.Error("a README without markers must be an error")
	}
}
