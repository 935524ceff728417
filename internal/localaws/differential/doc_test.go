package differential_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/localaws-differences.md from the difference table")

const docPath = "../../../docs/localaws-differences.md"

// TestDifferentialTableDoc keeps docs/localaws-differences.md equal to the
// table rendered (go test -run TestDifferentialTableDoc -update rewrites it),
// and checks that every decision is complete.
func TestDifferentialTableDoc(t *testing.T) {
	for _, d := range differences {
		switch {
		case d.Verdict != motoWrong && d.Verdict != oursWrong && d.Verdict != unspecified:
			t.Errorf("%s %v: unknown verdict %q", d.Scenario, d.Paths, d.Verdict)
		case d.Verdict == motoWrong && !strings.HasPrefix(d.Source, "https://"):
			t.Errorf("%s %v: a moto-wrong decision must cite AWS's documentation", d.Scenario, d.Paths)
		case d.Ours == "" || d.Moto == "" || d.Why == "" || len(d.Paths) == 0:
			t.Errorf("%s %v: a decision says what each side does, why, and where", d.Scenario, d.Paths)
		}
	}
	want := renderDoc()
	if *update {
		if err := os.WriteFile(filepath.Clean(docPath), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(filepath.Clean(docPath))
	if err != nil || string(got) != want {
		t.Errorf("%s is not the rendered difference table: run go test ./internal/localaws/differential -run TestDifferentialTableDoc -update", docPath)
	}
}

func renderDoc() string {
	counts := map[verdict]int{}
	for _, d := range differences {
		counts[d.Verdict]++
	}
	var b strings.Builder
	b.WriteString(`# The local stack against moto: decided differences

<!-- Generated from internal/localaws/differential/testdata/decisions.yaml by
go test ./internal/localaws/differential -run TestDifferentialTableDoc -update. Do not edit. -->

The differential suite (` + "`make test-differential`" + `, part of ` + "`make test`" + `) makes the same
aws-sdk-go-v2 calls against the local stack and against moto 5.2.1's ` + "`moto_server`" + `, and
compares the responses field by field after normalising ids, account ids, endpoints,
timestamps and request ids. Each difference fails the suite unless a decision below
matches it, and a decision that matches nothing fails it too. Error messages are free
text and are not compared; error codes and HTTP statuses are.

Verdicts: **moto wrong** (AWS's documentation cited), **our stack wrong** (a bug
reported on every run until fixed), **unspecified** (either answer is one a client
must accept).

`)
	fmt.Fprintf(&b, "%d decisions: %d moto wrong, %d our stack wrong, %d unspecified.\n\n",
		len(differences), counts[motoWrong], counts[oursWrong], counts[unspecified])
	b.WriteString("| scenario | fields | verdict | local stack | moto | why | source |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, d := range differences {
		fields := make([]string, len(d.Paths))
		for i, p := range d.Paths {
			fields[i] = "`" + p + "`"
		}
		v := string(d.Verdict)
		if d.Intermittent {
			v += " (intermittent)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", d.Scenario, strings.Join(fields, "<br>"), v,
			cell(d.Ours), cell(d.Moto), cell(d.Why), cell(d.Source))
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
