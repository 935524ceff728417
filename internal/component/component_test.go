package component

import (
	"context"
	"errors"
	"slices"
	"testing"
)

type state struct{ have map[string]bool }

type pass struct {
	st      *state
	missing []string
	skip    string // the component that the pass does not want
}

func (p *pass) State() *state            { return p.st }
func (p *pass) Missing(component string) { p.missing = append(p.missing, component) }

// client records the steps in the order in which they ran.
type client struct{ ran []string }

func table(fail string) []Component[*client, *pass, state] {
	var t []Component[*client, *pass, state]
	for _, name := range []string{"a", "b", "c"} {
		step := func(what string) func(*client, context.Context, *pass) error {
			return func(c *client, _ context.Context, p *pass) error {
				c.ran = append(c.ran, what+" "+name)
				if what+" "+name == fail {
					return errors.New("failed " + name)
				}
				if what == "ensure" {
					p.st.have[name] = true
				}
				return nil
			}
		}
		t = append(t, Component[*client, *pass, state]{
			Name:     name,
			Wanted:   func(p *pass) bool { return p.skip != name },
			Required: name != "a",
			Recorded: func(st state) bool { return st.have[name] },
			Ensure:   step("ensure"),
			Read:     step("read"),
			Lookup:   step("lookup"),
			Remove: func(c *client, _ context.Context, st *state) error {
				c.ran = append(c.ran, "remove "+name)
				delete(st.have, name)
				return nil
			},
		})
	}
	return t
}

func TestEnsureRemovesUnwantedInReverse(t *testing.T) {
	c, p := &client{}, &pass{st: &state{have: map[string]bool{"b": true}}, skip: "b"}
	if err := Ensure(context.Background(), table(""), c, p); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ensure a", "ensure c", "remove b"}; !slices.Equal(c.ran, want) {
		t.Errorf("ran %v, want %v", c.ran, want)
	}
	if !Recorded(table(""), *p.st) || p.st.have["b"] {
		t.Errorf("state %v: want a and c recorded, b removed", p.st.have)
	}
}

func TestReadReportsRequiredMissing(t *testing.T) {
	c, p := &client{}, &pass{st: &state{have: map[string]bool{}}, skip: "c"}
	if err := Read(context.Background(), table(""), c, p); err != nil {
		t.Fatal(err)
	}
	// a is not required, c is not wanted.
	if want := []string{"b"}; !slices.Equal(p.missing, want) {
		t.Errorf("missing %v, want %v", p.missing, want)
	}
}

func TestRemoveInReverse(t *testing.T) {
	c, st := &client{}, &state{have: map[string]bool{"a": true, "c": true}}
	if err := Remove(context.Background(), table(""), c, st); err != nil {
		t.Fatal(err)
	}
	if want := []string{"remove c", "remove b", "remove a"}; !slices.Equal(c.ran, want) {
		t.Errorf("ran %v, want %v", c.ran, want)
	}
	if Recorded(table(""), *st) {
		t.Errorf("state %v after Remove", st.have)
	}
}

func TestErrorNamesComponentAndKeepsText(t *testing.T) {
	c, p := &client{}, &pass{st: &state{have: map[string]bool{}}}
	err := Lookup(context.Background(), table("lookup b"), c, p)
	var ce *Error
	if !errors.As(err, &ce) || ce.Component != "b" || ce.Step != "lookup" {
		t.Fatalf("error %#v: want a lookup Error of b", err)
	}
	if err.Error() != "failed b" {
		t.Errorf("text %q, want the step's own", err.Error())
	}
	if want := []string{"lookup a", "lookup b"}; !slices.Equal(c.ran, want) {
		t.Errorf("ran %v, want %v: the walk stops at the error", c.ran, want)
	}
}
